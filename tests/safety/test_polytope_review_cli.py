"""Second review of ``trustlab safety polytope fit | eval | generate``: settings that leave the
held-out split (or the training split) without both classes are refused before any state is
read (the fit used to succeed and ``eval`` to fail on it afterwards, ``--max-per-category 1``);
options are checked before the model loads; a refused ``--out`` says what it holds."""

import pytest

import trustlab.llm
from cli_helpers import one_line, run_main


@pytest.fixture(autouse=True)
def no_model(monkeypatch):
    def refuse(name):
        raise AssertionError(f"the model {name} was loaded before the settings were checked")

    monkeypatch.setattr(trustlab.llm, "load_model", refuse)


@pytest.mark.parametrize(
    ("args", "option", "split"),
    [
        (["--max-per-category", "1"], "--max-per-category", "held-out"),
        (["--max-per-category", "2"], "--max-per-category", "held-out"),
        (["--test-size", "0.001"], "--test-size", "held-out"),
        (["--test-size", "0.999"], "--test-size", "training"),
    ],
)
def test_fit_refuses_a_split_without_both_classes(
    tmp_path, capsys, monkeypatch, args, option, split
):
    _stub_fit(monkeypatch, reading=False)
    code, _, err = run_main(
        ["safety", "polytope", "fit", "--layer", "3", "--out", str(tmp_path / "sap"), *args],
        capsys,
    )
    assert code == 2
    assert one_line(err).startswith(
        f"trustlab: error: {option}: expected a {split} split with harmful and benign prompts"
    )
    assert not (tmp_path / "sap").exists()


def test_fit_refuses_sources_of_one_class(tmp_path, capsys, monkeypatch):
    _stub_fit(monkeypatch, reading=False)
    code, _, err = run_main(
        [
            "safety",
            "polytope",
            "fit",
            "--layer",
            "3",
            "--out",
            str(tmp_path),
            "--sources",
            "benign",
        ],
        capsys,
    )
    assert code == 2
    assert (
        one_line(err)
        == "trustlab: error: --sources: expected harmful and benign prompt sets, got 'benign'"
    )


def test_a_refused_out_is_described_by_what_it_holds(tmp_path, capsys):
    # eval into a fit's folder would replace the fit's result.json: it was called "an evaluation"
    (tmp_path / "polytope.json").write_text("{}")
    (tmp_path / "result.json").write_text("{}")
    base = ["safety", "polytope", "eval", "--polytope", str(tmp_path), "--out", str(tmp_path)]
    code, _, err = run_main(base, capsys)
    assert code == 2
    assert one_line(err).startswith(
        f"trustlab: error: --out: {tmp_path} already holds an earlier run's result.json (beside "
        "polytope.json)"
    )
    # fit into an evaluation's folder: it was called "a polytope"
    (tmp_path / "polytope.json").unlink()
    (tmp_path / "report.html").write_text("")
    fit = ["safety", "polytope", "fit", "--layer", "3", "--out", str(tmp_path)]
    code, _, err = run_main(fit, capsys)
    assert code == 2
    assert one_line(err).startswith(
        f"trustlab: error: --out: {tmp_path} already holds an evaluation (result.json, report.html)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n-facets", "0"], "--n-facets: expected an integer >= 1, got 0"),
        (["--max-epochs", "0"], "--max-epochs: expected an integer >= 1, got 0"),
        (["--layer", "-1"], "--layer: expected an integer >= 0, got -1"),
        (["--facet-l1", "-1"], "--facet-l1: expected a number in [0, inf), got -1.0"),
    ],
)
def test_fit_checks_the_polytope_settings_before_the_model_loads(tmp_path, capsys, args, message):
    # they were refused only after the model had loaded (about 20 s later)
    fit = ["safety", "polytope", "fit", "--out", str(tmp_path / "sap")]
    layer = [] if "--layer" in args else ["--layer", "3"]  # an option is given once
    code, _, err = run_main([*fit, *layer, *args], capsys)
    assert code == 2
    assert one_line(err) == f"trustlab: error: {message}"


@pytest.mark.parametrize("command", ["eval", "generate"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--correction", "bogus"], "--correction: expected one of 'project', 'gate', 'direction'"),
        (
            ["--correction", "direction", "--correct-first", "3"],
            "--correct-first: expected 1 with correction='direction'",
        ),
        (["--margin", "-1"], "--margin: expected a number in [0, inf), got -1.0"),
        (["--max-new-tokens", "0"], "--max-new-tokens: expected an integer >= 1, got 0"),
    ],
)
def test_generation_options_are_checked_before_the_model_loads(
    tmp_path, capsys, command, args, message
):
    # they were refused after the model had loaded (and, for direction, after the refusal
    # direction had been computed from 32 prompts)
    line = ["safety", "polytope", command, "--polytope", str(tmp_path), *args]
    code, _, err = run_main(line + (["hi"] if command == "generate" else []), capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {message}")


def test_eval_checks_n_generate_before_the_model_loads(tmp_path, capsys):
    line = ["safety", "polytope", "eval", "--polytope", str(tmp_path), "--n-generate", "0"]
    code, _, err = run_main(line, capsys)
    assert code == 2
    assert one_line(err) == "trustlab: error: --n-generate: expected an integer >= 1, got 0"


def _stub_fit(monkeypatch, reading=True):
    """fit_on_prompts on random states of width 4 (no language model); ``reading=False``: the
    test fails if any state is read."""
    import numpy as np

    import trustlab.safety
    from trustlab.safety import PolytopeFit

    def fit_on_prompts(polytope, lm, prompts, progress=None):
        assert reading, "states were read before the settings were checked"
        rng = np.random.default_rng(0)
        unsafe = np.asarray(prompts.unsafe, dtype=bool)
        acts = rng.normal(size=(len(unsafe), 4)) + 3.0 * unsafe[:, None]
        polytope.fit(acts, unsafe, prompts.categories)
        return PolytopeFit(
            model=lm.name,
            layer=int(polytope.layer),
            n_prompts=len(unsafe),
            n_unsafe=int(unsafe.sum()),
            training_accuracy=1.0,
            facets=polytope.training_report_,
        )

    class Model:
        name, n_layers = "stub", 30

    monkeypatch.setattr(trustlab.safety, "fit_on_prompts", fit_on_prompts)
    monkeypatch.setattr(trustlab.llm, "load_model", lambda name: Model())


def test_fit_over_an_evaluation_does_not_leave_its_page_behind(tmp_path, capsys, monkeypatch):
    # fit --overwrite into an eval's folder replaced result.json and left report.html and roc.png
    # of the earlier polytope's evaluation beside the new polytope
    _stub_fit(monkeypatch)
    for name in ("report.html", "roc.png"):
        (tmp_path / name).write_text("an earlier evaluation")
    fit = ["safety", "polytope", "fit", "--layer", "3", "--out", str(tmp_path)]
    fit += ["--max-per-category", "4", "--max-epochs", "1", "--n-facets", "1"]
    code, _, err = run_main(fit, capsys)
    assert code == 2
    assert "already holds an evaluation (roc.png, report.html)" in one_line(err)
    code, _, err = run_main([*fit, "--overwrite"], capsys)
    assert code == 0, err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["facets.png", "polytope.json", "polytope.npz", "result.json"]

"""``trustlab explain anova-tpnn``: fit writes a loadable model, components.json and plots;
predict and plot use the saved model; bad input ends in one line and exit code 2."""

import json

import numpy as np
import pandas as pd
import pytest
import torch
from cli_helpers import one_line

from trustlab.cli import explain_anova
from trustlab.cli.main import main
from trustlab.explain.anova_tpnn import ANOVATPNN


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _exit_code(args) -> int:
    """Run ``trustlab ARGS`` (for module-scoped fixtures, which cannot use capsys)."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    return exc.value.code


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A CSV with a numeric, a categorical and an id column, a gap, and a 3-class label."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "size": rng.uniform(0, 10, n).round(2),
            "shape": rng.choice(["round", "square", "star"], n),
        }
    )
    score = frame["size"] / 3 + (frame["shape"] == "star") * 2 + rng.normal(0, 0.5, n)
    frame["kind"] = np.where(score < 1.5, "small", np.where(score < 3, "medium", "large"))
    frame.loc[7, "size"] = np.nan
    path = tmp_path_factory.mktemp("data") / "items.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.fixture(scope="module")
def fitted(table, tmp_path_factory):
    """One fit through the CLI, shared by the tests that read its output."""
    path, _ = table
    out = tmp_path_factory.mktemp("fit")
    args = ["explain", "anova-tpnn", "fit", "--data", path, "--label", "kind", "--out", out]
    args += ["--exclude", "id", "--drop-missing", "--max-epochs", "5", "--n-jobs", "1"]
    return _exit_code([*args, "--json"]), out


def test_fit_writes_a_loadable_model_components_and_plots(fitted, table):
    code, out = fitted
    assert code == 0
    names = {p.name for p in out.iterdir()}
    assert {"model.pt", "model.json", "components.json", "importance.png"} <= names
    plots = {n for n in names if n.startswith("component_")}
    assert plots == {"component_size.png", "component_shape.png", "component_size__shape.png"}
    model = ANOVATPNN.load(out)
    _, frame = table
    rows = frame.dropna()
    assert model.feature_names_ == ["size", "shape"]
    assert set(model.predict(rows)) <= {"small", "medium", "large"}
    document = json.loads((out / "components.json").read_text())
    assert [c["name"] for c in document["components"]] == model.component_names_
    size = document["components"][0]
    grid = model.component_grid("size", explain_anova.GRID_POINTS)
    np.testing.assert_allclose(size["values"], grid.values)
    assert document["classes"] == ["large", "medium", "small"]


def test_fit_prints_json_with_the_training_run(run, table, tmp_path):
    path, _ = table
    code, out, err = run(
        "explain", "anova-tpnn", "fit", "--data", path, "--label", "kind", "--out", tmp_path,
        "--exclude", "id", "--drop-missing", "--max-epochs", "2", "--order", "1",
        "--n-jobs", "1", "--top", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["task"] == "classification" and result["n_components"] == 2
    assert result["n_rows"] == 399 and result["n_epochs"] == 2
    assert len([f for f in result["files"] if f.endswith(".png")]) == 1 + 1
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(
        f for f in result["files"] if f.endswith(".png")
    )


def test_predict_writes_predictions_probabilities_and_components(run, fitted, table, tmp_path):
    _, model_dir = fitted
    path, frame = table
    clean = tmp_path / "clean.csv"
    frame.dropna().to_csv(clean, index=False)
    target = tmp_path / "pred.csv"
    code, _, err = run(
        "explain", "anova-tpnn", "predict", "--model", model_dir, "--data", clean,
        "--out", target, "--components",
    )  # fmt: skip
    assert code == 0, err
    written = pd.read_csv(target)
    model = ANOVATPNN.load(model_dir)
    rows = frame.dropna()
    np.testing.assert_array_equal(written["prediction"], model.predict(rows))
    np.testing.assert_allclose(written["probability_large"], model.predict_proba(rows)[:, 0])
    np.testing.assert_allclose(
        written["size & shape [small]"], model.components(rows).values[:, 2, 2]
    )


def test_plot_draws_named_components(run, fitted, tmp_path):
    _, model_dir = fitted
    code, _, err = run(
        "explain", "anova-tpnn", "plot", "--model", model_dir, "--component", "size:shape",
        "--component", "shape", "--out", tmp_path, "--target", "large",
    )  # fmt: skip
    assert code == 0, err
    assert {p.name for p in tmp_path.iterdir()} == {
        "component_size__shape.png",
        "component_shape.png",
        "result.json",
    }


def test_bad_input_ends_in_one_line_and_exit_2(run, table, tmp_path):
    path, _ = table
    base = ["explain", "anova-tpnn", "fit", "--data", path, "--out", tmp_path, "--n-jobs", "1"]
    cases = [
        (["--label", "colour"], "--label"),
        (["--label", "kind", "--exclude", "id"], "missing"),  # the gap in 'size'
        (["--label", "kind", "--exclude", "id", "--interactions", "size"], "--interactions"),
        (["--label", "kind", "--features", "size,weight"], "--features"),
    ]
    for extra, text in cases:
        code, _, err = run(*base, *extra)
        assert code == 2 and text in one_line(err), err
    code, _, err = run("explain", "anova-tpnn", "predict", "--model", tmp_path, "--data", path)
    assert code == 2 and "model.pt" in err

"""``trustlab explain anova-tpnn``: fit writes a loadable model, components.json and plots;
predict and plot use the saved model; bad input ends in one line and exit code 2."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from cli_helpers import Recorder, documented, one_line
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
        (["--label", "kind", "--features", "size,kind"], "--features: expected feature columns"),
    ]
    for extra, text in cases:
        code, _, err = run(*base, *extra)
        assert code == 2 and text in one_line(err), err
    code, _, err = run("explain", "anova-tpnn", "predict", "--model", tmp_path, "--data", path)
    assert code == 2 and "model.pt" in err


# ---------------------------------------------------------------- the commands the docs show


def _voters(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.uniform(20, 70, n).round(1),
            "income": rng.uniform(1, 9, n).round(2),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    score = (frame.age - 45) / 10 * (frame.income - 5) / 2 + (frame.sex == "f")
    frame["vote"] = np.where(score + rng.normal(0, 0.5, n) > 0.5, "yes", "no")
    return frame


def test_the_docs_commands_run(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    _voters(200).to_csv("train.csv", index=False)
    _voters(20, seed=1).drop(columns="vote").to_csv("new.csv", index=False)
    commands = documented("docs/explain-anova-tpnn.md", "trustlab explain anova-tpnn")
    assert len(commands) >= 5
    for args in commands:
        code, out, err = run(*args, "--n-jobs", "1") if "fit" in args else run(*args)
        assert code == 0, (args, err)
        if "--json" in args:
            json.loads(out)
    assert ANOVATPNN.load("model").feature_names_ == ["age", "income", "sex"]
    assert list(pd.read_csv("pred.csv").columns[:2]) == ["row", "prediction"]
    assert {p.name for p in Path("plots").iterdir()} == {
        "result.json",
        "component_age.png",
        "component_age__income.png",
    }


def test_the_readme_command_runs(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.uniform(-1, 1, size=(150, 3)), columns=["a", "b", "c"])
    table["y"] = np.sin(3 * table.a) + table.a * table.b + 0.1 * rng.normal(size=150)
    table.to_csv("table.csv", index=False)
    (args,) = documented("README.md", "trustlab explain anova-tpnn")
    code, out, err = run(*args, "--max-epochs", "20", "--n-jobs", "1")
    assert code == 0, err
    assert "held-out RMSE" in out
    assert (tmp_path / "tpnn" / "model.pt").is_file()


# ---------------------------------------------------------------- fit


def _fit(run, table, *extra):
    path, _ = table
    args = ["explain", "anova-tpnn", "fit", "--data", path, "--label", "kind", "--exclude", "id",
            "--drop-missing"]  # fmt: skip
    defaults = ["--max-epochs", "3", "--order", "1", "--n-jobs", "1"]
    # an option of extra replaces its default (the CLI refuses an option given twice)
    kept = [x for pair in zip(defaults[::2], defaults[1::2], strict=True) if pair[0] not in extra
            for x in pair]  # fmt: skip
    return run(*args, *kept, *extra)


def test_fit_json_without_out_prints_the_fit_and_saves_nothing(run, table, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _fit(run, table, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["task"] == "classification" and result["n_held_out"] == 60
    assert "nothing saved" in err
    assert list(tmp_path.iterdir()) == []


def test_fit_reports_the_held_out_accuracy_and_which_rows(fitted, table):
    _, out = fitted
    _, frame = table
    result = json.loads((out / "result.json").read_text())
    held_out = pd.read_csv(out / "held_out_rows.csv")["row"].to_numpy()
    assert len(held_out) == result["n_held_out"] == 60  # 15% of the 399 rows without a gap
    assert 7 not in held_out and held_out.max() < len(frame)  # the file's rows (row 7 dropped)
    rows = frame.loc[held_out]
    accuracy = np.mean(ANOVATPNN.load(out).predict(rows) == rows["kind"].to_numpy())
    assert result["held_out_metric"] == "accuracy"
    assert result["held_out_score"] == pytest.approx(accuracy, abs=1e-12)


def test_fit_prints_the_held_out_rmse_for_regression(run, tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(-1, 1, 200), "z": rng.uniform(-1, 1, 200)})
    frame["y"] = frame.x**2 + frame.z + 0.1 * rng.normal(size=200)
    frame.to_csv(tmp_path / "reg.csv", index=False)
    code, out, err = run(
        "explain", "anova-tpnn", "fit", "--data", tmp_path / "reg.csv", "--label", "y",
        "--max-epochs", "5", "--n-jobs", "1", "--out", tmp_path / "m",
    )  # fmt: skip
    assert code == 0, err
    assert "held-out RMSE" in out and "on the 30 rows kept out of training" in out
    held_out = pd.read_csv(tmp_path / "m" / "held_out_rows.csv")["row"]
    rows = frame.loc[held_out]
    predicted = ANOVATPNN.load(tmp_path / "m").predict(rows[["x", "z"]])
    rmse = float(np.sqrt(np.mean((predicted - rows.y) ** 2)))
    assert json.loads((tmp_path / "m" / "result.json").read_text())["held_out_score"] == (
        pytest.approx(rmse, rel=1e-9)
    )


def test_refitting_into_the_same_out_needs_overwrite(run, table, tmp_path):
    code, _, err = _fit(run, table, "--out", tmp_path, "--top", "2")
    assert code == 0, err
    code, _, err = _fit(run, table, "--out", tmp_path)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: --out: {tmp_path} already holds an earlier")
    code, _, err = _fit(run, table, "--out", tmp_path, "--overwrite", "--top", "1")
    assert code == 0, err
    assert len(list(tmp_path.glob("component_*.png"))) == 1  # the earlier run's second is gone


def test_fit_progress_counts_epochs_and_the_plan_is_said_first(run, table, monkeypatch):
    seen = Recorder()
    monkeypatch.setattr(explain_anova, "progress", seen.progress)
    code, _, err = _fit(run, table)
    assert code == 0, err
    assert seen.totals == [3] and seen.completed == [0, 1, 2, 3]
    assert err.splitlines()[0] == (
        "trustlab: fitting ANOVA-TPNN on 399 rows of items.csv (1 with a missing value dropped): "
        "2 components x 10 basis neurons, at most 3 epochs"
    )
    monkeypatch.setattr(explain_anova, "MAX_FIT_WORK", 1000)
    code, _, err = _fit(run, table)
    assert code == 2 and one_line(err).startswith("trustlab: error: --yes: fitting ANOVA-TPNN")


def test_fit_errors_name_the_options_and_the_files_rows(run, table, tmp_path):
    _, frame = table
    broken = frame.copy()
    broken.loc[120, "size"] = np.inf  # after the gap in row 7, which --drop-missing drops
    broken.to_csv(tmp_path / "inf.csv", index=False)
    cases = [
        (["--max-epochs", "0"], "'--max-epochs'"),
        (["--order", "0"], "'--order'"),
        (["--task", "guess"], "--task: expected one of 'auto', 'regression', 'classification'"),
        (["--n-jobs", "0"], "--n-jobs: expected"),
        (["--interactions", "size:weight"], "--interactions: expected a column of the data"),
    ]
    for extra, text in cases:
        code, _, err = _fit(run, table, *extra)
        assert code == 2 and text in one_line(err), err
    code, _, err = _fit(run, (tmp_path / "inf.csv", broken))
    assert code == 2
    assert "got inf in 'size' at row 120 (counted from 0 after the header" in one_line(err)


def test_input_the_library_refuses_is_one_line_before_any_plan(run, tmp_path):
    """What only the fit can check (a constant feature, one class) is refused before the plan is
    announced, so bad input stays one line."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=80), "b": 1.0, "y": rng.normal(size=80)})
    frame.to_csv(tmp_path / "constant.csv", index=False)
    frame.assign(b=rng.normal(size=80), y="same").to_csv(tmp_path / "one_class.csv", index=False)
    for name, text in [("constant.csv", "'b' to vary"), ("one_class.csv", "--label: expected")]:
        code, _, err = run(
            "explain", "anova-tpnn", "fit", "--data", tmp_path / name, "--label", "y",
            "--task", "classification" if name == "one_class.csv" else "auto", "--n-jobs", "1",
        )  # fmt: skip
        assert code == 2 and text in one_line(err), err


# ---------------------------------------------------------------- predict and plot


def test_predict_json_and_encoding(run, fitted, table, tmp_path):
    _, model_dir = fitted
    _, frame = table
    clean = frame.dropna().assign(note="café")
    clean.to_csv(tmp_path / "latin.csv", index=False, encoding="latin-1")
    args = ["explain", "anova-tpnn", "predict", "--model", model_dir / "model.pt"]
    code, _, err = run(*args, "--data", tmp_path / "latin.csv", "--json")
    assert code == 2 and "--encoding" in one_line(err)
    code, out, err = run(*args, "--data", tmp_path / "latin.csv", "--json", "--encoding", "latin-1")
    assert code == 0, err
    printed = json.loads(out)
    model = ANOVATPNN.load(model_dir)
    assert printed["n_rows"] == len(clean) and printed["classes"] == ["large", "medium", "small"]
    assert [r["row"] for r in printed["rows"]] == list(range(len(clean)))  # the file's rows
    assert [r["prediction"] for r in printed["rows"]] == list(model.predict(clean))


def test_predict_refuses_to_replace_a_file_unless_overwrite(run, fitted, table, tmp_path):
    _, model_dir = fitted
    _, frame = table
    frame.dropna().to_csv(tmp_path / "clean.csv", index=False)
    target = tmp_path / "pred.csv"
    target.write_text("keep me")
    args = [
        "explain",
        "anova-tpnn",
        "predict",
        "--model",
        model_dir,
        "--data",
        tmp_path / "clean.csv",
    ]
    code, _, err = run(*args, "--out", target)
    assert code == 2 and "--overwrite" in one_line(err)
    assert target.read_text() == "keep me"
    assert run(*args, "--out", target, "--overwrite")[0] == 0
    assert len(pd.read_csv(target)) == len(frame) - 1


def test_plot_json_and_a_second_plot_into_the_same_out(run, fitted, tmp_path):
    _, model_dir = fitted
    args = ["explain", "anova-tpnn", "plot", "--model", model_dir, "--out", tmp_path]
    code, out, err = run(*args, "--component", "size", "--json")
    assert code == 0, err
    assert json.loads(out)["file_names"] == ["component_size.png"]
    code, _, err = run(*args, "--component", "shape")
    assert code == 2 and "--overwrite" in one_line(err)
    assert run(*args, "--component", "shape", "--overwrite")[0] == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["component_shape.png"]


def test_a_file_as_out_is_refused_before_the_fit(run, table, tmp_path):
    (tmp_path / "taken").write_text("not a folder")
    code, _, err = _fit(run, table, "--out", tmp_path / "taken")
    assert code == 2 and one_line(err).startswith("trustlab: error: --out: expected a directory")


# ---------------------------------------------------------------- review fixes


def test_components_named_like_output_columns_do_not_replace_them(run, tmp_path):
    """Features called ``prediction``, ``row`` and ``row_id``: the prediction is kept (the
    component is ``component:prediction``) and the row id gets a free name, in CSV and JSON."""
    rng = np.random.default_rng(5)
    n = 120
    frame = pd.DataFrame({c: rng.normal(size=n) for c in ("a", "prediction", "row", "row_id")})
    frame["y"] = 3 * frame["a"] + rng.normal(0, 0.1, n)
    frame.to_csv(tmp_path / "collide.csv", index=False)
    code, _, err = run(
        "explain", "anova-tpnn", "fit", "--data", tmp_path / "collide.csv", "--label", "y",
        "--order", "1", "--max-epochs", "3", "--n-jobs", "1", "--out", tmp_path / "m",
    )  # fmt: skip
    assert code == 0, err
    model = ANOVATPNN.load(tmp_path / "m")
    X = frame.drop(columns="y")
    args = ["explain", "anova-tpnn", "predict", "--model", tmp_path / "m"]
    args += ["--data", tmp_path / "collide.csv", "--components"]
    code, _, err = run(*args, "--out", tmp_path / "pred.csv")
    assert code == 0, err
    written = pd.read_csv(tmp_path / "pred.csv")
    assert list(written.columns) == [
        "row_id_id", "prediction", "a", "component:prediction", "row", "row_id",
    ]  # fmt: skip
    np.testing.assert_allclose(written["prediction"], model.predict(X))
    np.testing.assert_allclose(written["component:prediction"], model.components(X)["prediction"])
    code, out, err = run(*args, "--json")
    assert code == 0, err
    first = json.loads(out)["rows"][0]
    assert first["prediction"] == pytest.approx(model.predict(X)[0])
    assert first["row_id_id"] == 0


def test_fit_drops_excluded_columns_from_features(run, table, tmp_path):
    path, _ = table
    args = ["explain", "anova-tpnn", "fit", "--data", path, "--label", "kind", "--drop-missing"]
    args += ["--max-epochs", "2", "--order", "1", "--n-jobs", "1"]
    code, _, err = run(*args, "--features", "size,shape,id", "--exclude", "id", "--out", tmp_path)
    assert code == 0, err
    assert ANOVATPNN.load(tmp_path).feature_names_ == ["size", "shape"]
    code, _, err = run(*args, "--features", "id", "--exclude", "id")
    line = one_line(err)
    assert code == 2 and "--exclude" in line and "--features" in line, err


def test_predict_out_in_a_new_folder_is_made_and_under_a_file_refused_first(
    run, fitted, table, tmp_path, monkeypatch
):
    _, model_dir = fitted
    _, frame = table
    frame.dropna().to_csv(tmp_path / "clean.csv", index=False)
    args = ["explain", "anova-tpnn", "predict", "--model", model_dir]
    args += ["--data", tmp_path / "clean.csv"]
    target = tmp_path / "new" / "deeper" / "pred.csv"
    code, _, err = run(*args, "--out", target)
    assert code == 0, err
    assert len(pd.read_csv(target)) == len(frame) - 1
    (tmp_path / "taken").write_text("a file")

    def no_work(_):
        raise AssertionError("the model was loaded before --out was checked")

    monkeypatch.setattr(explain_anova, "_load", no_work)
    code, _, err = run(*args, "--out", tmp_path / "taken" / "pred.csv")
    assert code == 2 and one_line(err).startswith("trustlab: error: --out:"), err


def test_n_jobs_help_says_the_default_is_torchs_own_setting():
    import typer

    command = typer.main.get_command(explain_anova.app).commands["fit"]
    (option,) = [p for p in command.params if p.name == "n_jobs"]
    assert option.default is None
    assert "default 1" not in option.help and "torch's own" in option.help


def test_drop_missing_that_leaves_too_few_rows_says_so(run, tmp_path):
    """Every row with a gap: it said "--data: found array with 0 sample(s) (shape=(0, 2))"."""
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [np.nan, np.nan, 1.0], "y": [0, 1, 0]})
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    args = ["explain", "anova-tpnn", "fit", "--data", tmp_path / "gaps.csv", "--label", "y"]
    code, _, err = run(*args, "--drop-missing", "--max-epochs", "1")
    line = one_line(err)
    assert code == 2 and line.startswith("trustlab: error: --data:"), err
    assert "got 1 of 3 (--drop-missing drops the others)" in line

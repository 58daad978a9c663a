"""``trustlab explain fastpd``: the API's numbers on disk, safe model loading, clear bad input."""

import json

import joblib
import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
import xgboost as xgb
from sklearn.ensemble import RandomForestClassifier
from typer.testing import CliRunner

from cli_helpers import Recorder, documented, one_line
from trustlab.cli.explain import app
from trustlab.errors import InputError
from trustlab.explain import FastPD, Importance

RNG = np.random.default_rng(8)
N = 120
FRAME = pd.DataFrame(RNG.normal(size=(N, 3)), columns=["age", "income", "hours"])
LABEL = (FRAME.age * FRAME.income + 0.3 * FRAME.hours > 0).astype(int)


class NotALibraryType:
    """Stands for user code hidden in a model file."""

    def __init__(self):
        self.payload = 1


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    model = RandomForestClassifier(15, max_depth=4, random_state=0).fit(FRAME, LABEL)
    sio.dump(model, folder / "forest.skops")
    joblib.dump(model, folder / "forest.pkl")
    sio.dump({"model": model, "extra": NotALibraryType()}, folder / "odd.skops")
    xgb.train({"max_depth": 3}, xgb.DMatrix(FRAME.to_numpy(), label=LABEL), 5).save_model(
        folder / "booster.ubj"
    )
    lgb.train(
        {"num_leaves": 6, "verbose": -1, "min_data_in_leaf": 5},
        lgb.Dataset(FRAME.to_numpy(), LABEL.to_numpy()),
        5,
    ).save_model(folder / "booster.txt")
    FRAME.assign(vote=LABEL).to_csv(folder / "people.csv", index=False)
    FRAME.assign(name="x").to_csv(folder / "text.csv", index=False)
    return folder, model


def invoke(*args):
    return CliRunner().invoke(app, ["fastpd", *map(str, args)])


def test_writes_the_api_shap_values_tables_and_plots(files, tmp_path):
    folder, model = files
    result = invoke(
        "--model", folder / "forest.skops", "--data", folder / "people.csv", "--out", tmp_path
    )
    assert result.exit_code == 0, result.output
    assert "FastPD importance of the probability over 120 rows" in result.stdout
    explainer = FastPD(model).fit(FRAME)  # every row is explained and (N < 1000) background
    phi = explainer.shap_values(FRAME)
    written = pd.read_csv(tmp_path / "shap_values.csv")
    assert list(written.columns[:4]) == ["row", "0:age", "0:income", "0:hours"]
    assert list(written["row"]) == list(range(N))
    values = written.drop(columns="row").to_numpy()
    assert np.abs(values - phi.transpose(0, 2, 1).reshape(N, -1)).max() <= 1e-12
    summary = json.loads((tmp_path / "result.json").read_text())
    assert summary["n_background"] == N
    assert summary["expected_value"] == pytest.approx(list(explainer.expected_value_), abs=1e-12)
    interactions = pd.read_csv(tmp_path / "interactions.csv")
    assert list(interactions.columns) == ["feature_1", "feature_2", "mean_abs_m"]
    assert len(interactions) == 3
    for name in ("shap_summary.png", "pd_age.png", "pd_income.png", "pd_hours.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_json_output_is_the_explanation_of_the_api(files, run):
    folder, model = files
    code, out, err = run(
        "explain", "fastpd", "--model", folder / "forest.skops", "--data", folder / "people.csv",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    explainer = FastPD(model).fit(FRAME)
    expected = Importance.from_values(
        explainer.shap_values(FRAME),
        explainer.decompose(FRAME, max_order=2),
        explainer.ensemble_.rounding_level(),
    ).to_dict()
    printed = json.loads(out)
    assert printed["importance"] == json.loads(json.dumps(expected))
    assert printed == explainer.explain(FRAME).to_dict()


def test_features_option_chooses_the_pd_plots(files, tmp_path):
    folder, _ = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    result = invoke(*args, "--features", "hours", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("pd_*.png")) == ["pd_hours.png"]


def test_the_drawn_background_follows_the_seed(files, tmp_path):
    folder, _ = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    runs = []
    for out, seed in (("a", 0), ("b", 0), ("c", 1)):
        result = invoke(*args, "--background-size", 50, "--seed", seed, "--out", tmp_path / out)
        assert result.exit_code == 0, result.output
        runs.append(pd.read_csv(tmp_path / out / "shap_values.csv"))
        assert json.loads((tmp_path / out / "result.json").read_text())["n_background"] == 50
    assert len(runs[0]) == N and runs[0].equals(runs[1]) and not runs[0].equals(runs[2])


@pytest.mark.parametrize("name", ["booster.ubj", "booster.txt"])
def test_xgboost_and_lightgbm_model_files_are_read(files, tmp_path, name):
    folder, _ = files
    args = ["--model", folder / name, "--data", folder / "people.csv", "--out", tmp_path]
    result = invoke(*args, "--label", "vote")
    assert result.exit_code == 0, result.output
    assert pd.read_csv(tmp_path / "shap_values.csv").shape == (N, 1 + 3)


def test_pickle_is_read_only_when_trusted(files):
    folder, _ = files
    args = ["--model", folder / "forest.pkl", "--data", folder / "people.csv"]
    refused = invoke(*args)
    assert isinstance(refused.exception, InputError)
    assert "--trust-pickle" in str(refused.exception)
    assert invoke(*args, "--trust-pickle").exit_code == 0


def test_untrusted_types_in_a_skops_file_are_listed(files):
    folder, _ = files
    result = invoke("--model", folder / "odd.skops", "--data", folder / "people.csv")
    assert isinstance(result.exception, InputError)
    message = str(result.exception)
    assert message.startswith("--model: odd.skops holds types outside sklearn, numpy, scipy")
    assert "--trust-type" in message
    assert "NotALibraryType" in message


def test_named_types_in_a_skops_file_are_trusted(files):
    from trustlab.cli.explain import load_tree_model

    folder, _ = files
    name = f"{NotALibraryType.__module__}.{NotALibraryType.__qualname__}"
    loaded = load_tree_model(folder / "odd.skops", trust_types=[name])
    assert loaded["extra"].payload == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "missing.skops"], "--model: expected an existing model file"),
        (["--model", "people.csv"], "--model: expected a .skops file, an xgboost"),
        (["--data", "nowhere.csv"], "--data: expected an existing CSV or Parquet file"),
        (["--features", "height"], "--features: expected feature names among"),
        (["--background-size", "0"], "--background-size: expected an integer >= 1"),
        (["--exclude", "height"], "--exclude: expected a column of the data"),
        (["--label", "height"], "--label: expected a column of the data"),
        (["--label", "age"], "--label: expected a column that is not one of the model's"),
        (["--rows", "500"], "--rows: expected row positions in [0, 120)"),
        (
            ["--rows", "200:300"],
            "--rows: expected a non-empty range START:STOP (START < STOP) of rows within the 120",
        ),
        # a range reaching past the last row is refused, not cut to the table (review 56)
        (
            ["--rows", "100:121"],
            "--rows: expected a non-empty range START:STOP (START < STOP) of rows within the "
            "120 rows of the table (counted from 0), got '100:121'",
        ),
        # an empty or reversed range inside the table says so (review 58)
        (
            ["--rows", "5:5"],
            "--rows: expected a non-empty range START:STOP (START < STOP) of rows within the "
            "120 rows of the table (counted from 0), got '5:5' (an empty or reversed range)",
        ),
        (
            ["--rows", "7:3"],
            "--rows: expected a non-empty range START:STOP (START < STOP) of rows within the "
            "120 rows of the table (counted from 0), got '7:3' (an empty or reversed range)",
        ),
        (["--background-rows", "0:100000"], "--background-rows: expected a non-empty range"),
        (["--rows", "first-ten"], "--rows: expected all, START:STOP, row ids like 3,17,42"),
        (["--background-rows", "0:9", "--background-size", "5"], "--background-rows: expected "),
        (["--max-order", "0"], "--max-order: expected an integer >= 1"),
        (["--background-rows", "0:10,5"], "--background-rows: expected distinct rows, got row 5"),
        (["--background-rows", "0:9", "--seed", "3"], "--seed: expected no seed with --backgro"),
        (["--encoding", "klingon"], "--encoding: expected a text encoding"),
    ],
)
def test_bad_input_is_named(files, args, message, run):
    folder, _ = files
    given = dict(zip(args[::2], args[1::2], strict=True))
    model = given.pop("--model", "forest.skops")
    data = given.pop("--data", "people.csv")
    extra = [item for pair in given.items() for item in pair]
    assert error(run, "--model", folder / model, "--data", folder / data, *extra).startswith(
        message
    )


def error(run, *args) -> str:
    """The one line ``trustlab explain fastpd ARGS`` prints for bad input (exit code 2)."""
    code, _, err = run("explain", "fastpd", *args)
    assert code == 2, err
    return one_line(err).removeprefix("trustlab: error: ")


def test_data_without_the_model_columns_is_refused(files, tmp_path, run):
    folder, _ = files
    FRAME.drop(columns="hours").to_csv(tmp_path / "short.csv", index=False)
    message = error(run, "--model", folder / "forest.skops", "--data", tmp_path / "short.csv")
    assert message.startswith("--data: expected the model's feature columns")


def test_unnamed_models_need_the_right_number_of_columns(files, run):
    folder, _ = files
    message = error(run, "--model", folder / "booster.txt", "--data", folder / "people.csv")
    assert message.startswith("--data: expected 3 feature columns (the model's), got 4")
    assert "does not store its feature names" in message
    assert "--label" in message and "--exclude" in message


def test_non_numeric_features_are_refused(files, run):
    folder, _ = files
    message = error(
        run, "--model", folder / "booster.txt", "--data", folder / "text.csv", "--exclude", "age"
    )
    assert message.startswith("--data: expected numeric feature columns")


def test_a_header_without_rows_is_named_as_such(files, tmp_path, run):
    """Its columns read as text: the message blamed non-numeric features."""
    folder, _ = files
    (tmp_path / "empty.csv").write_text("age,income,hours\n")
    message = error(run, "--model", folder / "forest.skops", "--data", tmp_path / "empty.csv")
    assert message.startswith("--data: expected at least one row under the header")


# ---------------------------------------------------------------- the commands the docs show


def test_the_readme_command_runs_on_a_table_with_a_label_column(tmp_path, monkeypatch, run):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(400, 4)), columns=["a", "b", "c", "d"])
    table["y"] = table.a * table.b + np.sin(table.c)
    model = HistGradientBoostingRegressor(max_iter=30).fit(table[["a", "b", "c", "d"]], table.y)
    monkeypatch.chdir(tmp_path)
    sio.dump(model, "gbm.skops")
    table.to_csv("table.csv", index=False)  # the label column 'y' beside the features
    (args,) = documented("README.md", "trustlab explain fastpd")
    code, _, err = run(*args)
    assert code == 0, err
    assert "the model reads its columns by name; not used: y" in err
    written = pd.read_csv(tmp_path / "explained" / "shap_values.csv")
    assert list(written.columns) == ["row", "a", "b", "c", "d"]
    assert (tmp_path / "explained" / "pd_a.png").is_file()


def _pipeline(frame, label):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    encode = ColumnTransformer(
        [("num", StandardScaler(), ["age", "income"]), ("cat", OneHotEncoder(), ["town"])]
    )
    return make_pipeline(encode, GradientBoostingClassifier(n_estimators=10, max_depth=3)).fit(
        frame, label
    )


TOWNS = np.array(["Oslo", "Rome", "Lima"])[np.arange(N) % 3]


def test_the_docs_commands_run(files, tmp_path, monkeypatch, run):
    folder, model = files
    monkeypatch.chdir(tmp_path)
    sio.dump(model, "model.skops")
    booster = xgb.train({"max_depth": 3}, xgb.DMatrix(FRAME.to_numpy(), label=LABEL), 5)
    booster.save_model("booster.json")  # an xgboost Booster file stores no feature names
    table = FRAME.assign(town=TOWNS, label=LABEL)
    sio.dump(_pipeline(table, LABEL), "pipeline.skops")
    table.to_csv("table.csv", index=False)
    commands = documented("docs/explain-fastpd.md", "trustlab explain fastpd")
    assert len(commands) >= 4
    for args in commands:
        code, out, err = run(*args)
        assert code == 0, (args, err)
        if "--json" in args:
            assert json.loads(out)["importance"]["n_rows"] == N


# ---------------------------------------------------------------- rows, background, pipelines


def test_rows_and_background_rows_are_separate_and_join_back_to_the_file(files, tmp_path):
    folder, model = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    result = invoke(*args, "--rows", "10:20,5", "--background-rows", ":60", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    written = pd.read_csv(tmp_path / "shap_values.csv")
    assert list(written["row"]) == [*range(10, 20), 5]
    explainer = FastPD(model).fit(FRAME.iloc[:60])
    rows = FRAME.iloc[written["row"]]
    phi = explainer.shap_values(rows).transpose(0, 2, 1).reshape(len(rows), -1)
    assert np.abs(written.drop(columns="row").to_numpy() - phi).max() <= 1e-12
    assert json.loads((tmp_path / "result.json").read_text())["n_background"] == 60
    # joined on 'row', each row's SHAP values add up to its own prediction
    people = pd.read_csv(folder / "people.csv").rename_axis("row").reset_index()
    joined = people.merge(written, on="row")
    total = joined[["1:age", "1:income", "1:hours"]].sum(axis=1) + explainer.expected_value_[1]
    predicted = model.predict_proba(joined[["age", "income", "hours"]])[:, 1]
    np.testing.assert_allclose(total, predicted, atol=1e-12)


def test_rows_can_come_from_a_file(files, tmp_path):
    folder, _ = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    (tmp_path / "ids.txt").write_text("3\n7 9,11\n")
    assert invoke(*args, "--rows", tmp_path / "ids.txt", "--out", tmp_path / "a").exit_code == 0
    first = pd.read_csv(tmp_path / "a" / "shap_values.csv")
    assert list(first["row"]) == [3, 7, 9, 11]
    # an earlier shap_values.csv names the same rows through its 'row' column
    again = invoke(*args, "--rows", tmp_path / "a" / "shap_values.csv", "--out", tmp_path / "b")
    assert again.exit_code == 0, again.output
    assert pd.read_csv(tmp_path / "b" / "shap_values.csv").equals(first)


def test_a_pipeline_is_explained_through_its_transform(tmp_path, run):
    table = FRAME.assign(town=TOWNS)
    pipe = _pipeline(table, LABEL)
    sio.dump(pipe, tmp_path / "pipe.skops")
    table.assign(vote=LABEL).to_csv(tmp_path / "towns.csv", index=False)
    code, _, err = run(
        "explain", "fastpd", "--model", tmp_path / "pipe.skops", "--data", tmp_path / "towns.csv",
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert code == 0, err
    assert "through the pipeline's transform" in err and "not used: vote" in err
    written = pd.read_csv(tmp_path / "out" / "shap_values.csv")
    names = list(pipe[:-1].get_feature_names_out())
    assert names[0] == "num__age" and "cat__town_Rome" in names
    assert list(written.columns) == ["row", *names]
    phi = FastPD(pipe).fit(table).shap_values(table)
    assert np.abs(written[names].to_numpy() - phi).max() <= 1e-12


# ---------------------------------------------------------------- the whole file is checked


def test_inf_anywhere_in_the_file_is_refused_with_the_files_row(tmp_path, files, run):
    folder, _ = files
    FRAME.assign(vote=LABEL).assign(income=FRAME.income.where(FRAME.index != 97, np.inf)).to_csv(
        tmp_path / "inf.csv", index=False
    )
    message = error(
        run, "--model", folder / "forest.skops", "--data", tmp_path / "inf.csv",
        "--rows", "0:5", "--background-rows", "0:10",
    )  # fmt: skip
    assert message.startswith("--data: expected finite values, got inf in column 'income'")
    assert "at row 97 (counted from 0 after the header" in message


def test_nan_is_refused_anywhere_where_the_model_does_not_accept_it(tmp_path, run):
    from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

    holes = FRAME.copy()
    holes.loc[88, "hours"] = np.nan
    holes.to_csv(tmp_path / "holes.csv", index=False)
    target = FRAME.age + FRAME.income
    sio.dump(GradientBoostingRegressor(n_estimators=5).fit(FRAME, target), tmp_path / "gb.skops")
    message = error(
        run, "--model", tmp_path / "gb.skops", "--data", tmp_path / "holes.csv",
        "--rows", "0:5", "--background-size", "10",
    )  # fmt: skip
    assert "GradientBoostingRegressor does not accept NaN" in message
    assert "NaN in column 'hours' at row 88" in message
    routed = HistGradientBoostingRegressor(max_iter=5).fit(FRAME, target)  # routes NaN
    sio.dump(routed, tmp_path / "hgb.skops")
    code, _, err = run(
        "explain", "fastpd", "--model", tmp_path / "hgb.skops", "--data", tmp_path / "holes.csv"
    )
    assert code == 0, err


# ---------------------------------------------------------------- options every command has


def test_csv_encoding_is_an_option(files, tmp_path, run):
    folder, _ = files
    FRAME.assign(town="Zürich").to_csv(tmp_path / "latin.csv", index=False, encoding="latin-1")
    args = [
        "explain",
        "fastpd",
        "--model",
        folder / "forest.skops",
        "--data",
        tmp_path / "latin.csv",
    ]
    code, _, err = run(*args)
    assert code == 2 and "--encoding" in one_line(err)
    code, _, err = run(*args, "--encoding", "latin-1")
    assert code == 0, err


def test_an_earlier_run_in_out_is_refused_unless_overwrite(files, tmp_path, run):
    folder, _ = files
    args = [
        "explain",
        "fastpd",
        "--model",
        folder / "forest.skops",
        "--data",
        folder / "people.csv",
    ]
    code, _, err = run(*args, "--features", "age", "--out", tmp_path)
    assert code == 0, err
    code, _, err = run(*args, "--features", "hours", "--out", tmp_path)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: --out: {tmp_path} already holds an earlier")
    assert "--overwrite" in err
    code, out, err = run(*args, "--features", "hours", "--out", tmp_path, "--overwrite")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.glob("pd_*.png")) == ["pd_hours.png"]
    assert "removed the earlier run's pd_age.png" in out


def test_progress_counts_the_explained_rows(files, monkeypatch, run):
    import trustlab.cli.explain as explain_cli
    import trustlab.explain.fastpd.explainer as explainer_module

    monkeypatch.setattr(explainer_module, "BATCH_ROWS", 64)  # two batches of the 120 rows
    seen = Recorder()
    monkeypatch.setattr(explain_cli, "progress", seen.progress)
    folder, _ = files
    code, _, err = run(
        "explain", "fastpd", "--model", folder / "forest.skops", "--data", folder / "people.csv"
    )
    assert code == 0, err
    assert seen.totals == [N]
    assert seen.completed == [64, N]


def test_the_plan_is_said_up_front_and_huge_runs_need_yes(files, monkeypatch, run):
    import trustlab.cli.explain as explain_cli

    folder, _ = files
    args = [
        "explain",
        "fastpd",
        "--model",
        folder / "forest.skops",
        "--data",
        folder / "people.csv",
    ]
    code, _, err = run(*args)
    assert code == 0
    assert (
        "trustlab: explaining all 120 rows of people.csv: 15 trees, 3 features, "
        "background 120 rows" in err.splitlines()
    )
    monkeypatch.setattr(explain_cli, "MAX_ROWS", 100)
    code, _, err = run(*args)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --yes: explaining all 120 rows")
    assert run(*args, "--yes")[0] == 0
    assert run(*args, "--rows", ":100")[0] == 0


def test_a_pipeline_fitted_on_an_array_takes_the_tables_other_columns(tmp_path, run):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    target = FRAME.age * FRAME.income
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(10, max_depth=3, random_state=0))
    sio.dump(pipe.fit(FRAME.to_numpy(), target), tmp_path / "pipe.skops")
    FRAME.assign(y=target).to_csv(tmp_path / "table.csv", index=False)
    args = [
        "explain",
        "fastpd",
        "--model",
        tmp_path / "pipe.skops",
        "--data",
        tmp_path / "table.csv",
    ]
    message = error(run, *args[2:])
    assert message.startswith("--data: expected 3 feature columns (the model's), got 4")
    code, _, err = run(*args, "--label", "y", "--out", tmp_path / "out")
    assert code == 0, err
    # no scikit-learn warning about feature names: the plan and where the files went, nothing else
    assert [line for line in err.splitlines() if line.strip()] == [
        "trustlab: explaining all 120 rows of table.csv through the pipeline's transform: "
        "10 trees, 3 features, background 120 rows"
    ]
    written = pd.read_csv(tmp_path / "out" / "shap_values.csv")
    phi = FastPD(pipe).fit(FRAME.to_numpy()).shap_values(FRAME.to_numpy())
    assert np.abs(written.drop(columns="row").to_numpy() - phi).max() <= 1e-12


def test_a_file_as_out_is_refused_before_any_work(files, tmp_path, run):
    folder, _ = files
    (tmp_path / "taken").write_text("not a folder")
    message = error(
        run, "--model", folder / "forest.skops", "--data", folder / "people.csv",
        "--out", tmp_path / "taken",
    )  # fmt: skip
    assert message.startswith("--out: expected a directory")


def test_an_early_stopped_xgboost_file_is_explained_as_its_model_predicts(tmp_path, run):
    """Review 51: a model.json saved after early stopping keeps every round and records
    best_iteration; the command explained every round, not what the model predicts."""
    X, y = FRAME.to_numpy(), (LABEL * 2.0 + RNG.normal(size=N))
    model = xgb.XGBRegressor(n_estimators=200, learning_rate=0.5, early_stopping_rounds=3)
    model.fit(X[:80], y[:80], eval_set=[(X[80:], y[80:])], verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds()
    model.save_model(tmp_path / "model.json")
    FRAME.to_csv(tmp_path / "table.csv", index=False)
    args = ["--data", tmp_path / "table.csv", "--rows", "0:10", "--out", tmp_path / "out"]
    code, _, err = run("explain", "fastpd", "--model", tmp_path / "model.json", *args)
    assert code == 0, err
    assert f"best_iteration {model.best_iteration}" in err
    written = pd.read_csv(tmp_path / "out" / "shap_values.csv").set_index("row")
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    total = written.sum(axis=1).to_numpy() + result["expected_value"][0]
    np.testing.assert_allclose(total, model.predict(X[:10]), atol=1e-5)


def test_an_earlier_shap_values_file_of_a_feature_called_row_selects_rows(tmp_path, run):
    """Review 51: shap_values.csv names its id column row_id when a feature is called 'row';
    given back as --rows (as the docs suggest), its 'row' column of SHAP values was refused."""
    from sklearn.ensemble import RandomForestRegressor

    table = FRAME.rename(columns={"age": "row"})
    model = RandomForestRegressor(5, max_depth=3, random_state=0).fit(table, LABEL)
    sio.dump(model, tmp_path / "model.skops")
    table.to_csv(tmp_path / "table.csv", index=False)
    args = ["explain", "fastpd", "--model", tmp_path / "model.skops", "--data"]
    code, _, err = run(*args, tmp_path / "table.csv", "--rows", "3,7", "--out", tmp_path / "a")
    assert code == 0, err
    first = tmp_path / "a" / "shap_values.csv"
    assert list(pd.read_csv(first).columns[:2]) == ["row_id", "row"]
    code, _, err = run(*args, tmp_path / "table.csv", "--rows", first, "--out", tmp_path / "b")
    assert code == 0, err
    assert list(pd.read_csv(tmp_path / "b" / "shap_values.csv")["row_id"]) == [3, 7]

"""``trustlab explain fastpd``: the API's numbers on disk, safe model loading, clear bad input."""

import json

import joblib
import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
import xgboost as xgb
from cli_helpers import one_line
from sklearn.ensemble import RandomForestClassifier
from typer.testing import CliRunner

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
    assert "FastPD importance of the probability over 120 rows" in result.output
    explainer = FastPD(model).fit(FRAME)  # sizes above N: every row is background and explained
    phi = explainer.shap_values(FRAME)
    written = pd.read_csv(tmp_path / "shap_values.csv")
    assert list(written.columns[:3]) == ["0:age", "0:income", "0:hours"]
    assert np.abs(written.to_numpy() - phi.transpose(0, 2, 1).reshape(N, -1)).max() <= 1e-12
    summary = json.loads((tmp_path / "result.json").read_text())
    assert summary["n_background"] == N
    assert summary["expected_value"] == pytest.approx(list(explainer.expected_value_), abs=1e-12)
    interactions = pd.read_csv(tmp_path / "interactions.csv")
    assert list(interactions.columns) == ["feature_1", "feature_2", "mean_abs_m"]
    assert len(interactions) == 3
    for name in ("shap_summary.png", "pd_age.png", "pd_income.png", "pd_hours.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_json_output_is_the_explanation_of_the_api(files):
    folder, model = files
    result = invoke("--model", folder / "forest.skops", "--data", folder / "people.csv", "--json")
    assert result.exit_code == 0, result.output
    explainer = FastPD(model).fit(FRAME)
    expected = Importance.from_values(
        explainer.shap_values(FRAME), explainer.decompose(FRAME, max_order=2)
    ).to_dict()
    printed = json.loads(result.output)
    assert printed["importance"] == json.loads(json.dumps(expected))
    assert printed == explainer.explain(FRAME).to_dict()


def test_features_option_chooses_the_pd_plots(files, tmp_path):
    folder, _ = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    result = invoke(*args, "--features", "hours", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("pd_*.png")) == ["pd_hours.png"]


def test_sampled_rows_follow_the_seed(files, tmp_path):
    folder, _ = files
    args = ["--model", folder / "forest.skops", "--data", folder / "people.csv"]
    runs = []
    for out in ("a", "b"):
        result = invoke(*args, "--eval-size", 30, "--background-size", 50, "--out", tmp_path / out)
        assert result.exit_code == 0, result.output
        runs.append(pd.read_csv(tmp_path / out / "shap_values.csv"))
    assert len(runs[0]) == 30 and runs[0].equals(runs[1])


@pytest.mark.parametrize("name", ["booster.ubj", "booster.txt"])
def test_xgboost_and_lightgbm_model_files_are_read(files, tmp_path, name):
    folder, _ = files
    args = ["--model", folder / name, "--data", folder / "people.csv", "--out", tmp_path]
    result = invoke(*args, "--exclude", "vote")
    assert result.exit_code == 0, result.output
    assert pd.read_csv(tmp_path / "shap_values.csv").shape == (N, 3)


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
    assert "--exclude" in message


def test_non_numeric_features_are_refused(files, run):
    folder, _ = files
    message = error(
        run, "--model", folder / "booster.txt", "--data", folder / "text.csv", "--exclude", "age"
    )
    assert message.startswith("--data: expected numeric feature columns")

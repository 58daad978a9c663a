"""Feature columns of other dtypes than numbers and text: booleans, many distinct text values,
dates, Parquet's nullable and categorical columns. The default models train on each of them."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.audit.models import load_classifier, make_pipeline
from trustlab.audit.table import load_table


def table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame(
        {
            "x": x,
            "grp": rng.choice(["a", "b"], size=n),
            "y": (x + 0.5 * rng.normal(size=n) > 0).astype(int),
        }
    )


def zoo_audit(data, tmp_path):
    return run_audit(data, label="y", group="grp", out=tmp_path / "out", sections=["overview"])


def test_a_boolean_feature_column_trains_the_zoo(tmp_path):
    frame = table()
    frame["flag"] = frame["x"] > 0.3  # True/False: bool dtype, the only categorical column
    path = tmp_path / "bool.csv"
    frame.to_csv(path, index=False)
    result = zoo_audit(path, tmp_path)
    assert "flag" in result.context.feature_names
    assert set(result.context.predictions) == {
        "logistic_regression",
        "random_forest",
        "gradient_boosting",
    }
    saved = load_classifier(result.model_paths["gradient_boosting"])  # numpy.asarray is trusted
    X = result.context.X_test
    assert saved.predict(X).tolist() == result.context.predictions["gradient_boosting"].tolist()


def test_a_text_column_of_many_values_trains_gradient_boosting(tmp_path):
    frame = table()
    frame["name"] = [f"person {i}" for i in range(len(frame))]  # one-hot of 100 columns: sparse
    result = zoo_audit(frame, tmp_path)
    assert "name" in result.context.feature_names
    assert "gradient_boosting" in result.context.predictions


def test_a_date_column_is_left_out_of_the_models_with_a_note(tmp_path):
    frame = table()
    frame["when"] = pd.date_range("2020-01-01", periods=len(frame), freq="D")
    path = tmp_path / "dates.parquet"
    frame.to_parquet(path)
    result = zoo_audit(path, tmp_path)
    assert result.context.feature_names == ["x"]
    assert any("Date/time columns left out of the models: when" in n for n in result.context.notes)


def test_nullable_boolean_and_string_columns_with_gaps_are_imputed(tmp_path):
    frame = table(n=198)
    frame["flag"] = pd.array([True, False, None] * 66, dtype="boolean")
    frame["kind"] = pd.array(["u", None, "v"] * 66, dtype="string[python]")
    path = tmp_path / "nullable.parquet"
    frame.to_parquet(path)
    result = zoo_audit(path, tmp_path)
    assert result.context.feature_names == ["x", "flag", "kind"]
    assert any("imputed" in n and "flag: " in n and "kind: " in n for n in result.context.notes)


def test_categorical_columns_get_no_note_for_words_they_do_not_hold(tmp_path):
    frame = table()
    frame["yhat"] = frame["y"]
    for column in ("y", "grp", "yhat"):
        frame[column] = frame[column].astype(str).astype("category")
    path = tmp_path / "cat.parquet"
    frame.to_parquet(path)
    assert load_table(str(path), "y", "grp", "yhat", None).notes == []


def test_make_pipeline_fits_a_table_of_booleans_only():
    from sklearn.linear_model import LogisticRegression

    X = pd.DataFrame({"c": [True, False] * 10})
    y = [0, 1] * 10
    assert make_pipeline(LogisticRegression(), X).fit(X, y).predict(X).tolist() == y


def test_a_true_false_label_with_an_empty_cell_is_audited(tmp_path):
    frame = table()
    frame["yhat"] = (frame["x"] > 0).astype(int)
    frame["y"] = frame["y"].map({0: "FALSE", 1: "TRUE"}).astype(object)
    frame.loc[5, "y"] = np.nan  # read back as objects: True, False and NaN
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    result = run_audit(path, label="y", group="grp", pred="yhat", out=tmp_path / "pred")
    assert [s.status for s in result.report.sections] == ["ok", "ok"]
    kept = frame.drop(index=5)
    expected = ((kept["y"] == "TRUE").astype(int) == kept["yhat"]).mean()
    assert result.headline()["yhat"]["accuracy"] == pytest.approx(expected)
    zoo = run_audit(path, label="y", group="grp", out=tmp_path / "zoo", sections=["overview"])
    assert zoo.context.labels.tolist() == [False, True]


def test_the_one_hot_of_an_id_like_text_column_has_a_bounded_width():
    from sklearn.linear_model import LogisticRegression

    from trustlab.audit.models import MAX_CATEGORIES

    n = 400
    X = pd.DataFrame({"id": [f"row {i}" for i in range(n)], "x": np.arange(n) % 7})
    y = np.arange(n) % 2
    pipeline = make_pipeline(LogisticRegression(), X).fit(X, y)
    width = pipeline.named_steps["prep"].transform(X).shape[1]
    assert width == MAX_CATEGORIES + 1  # the id's columns (rare values share one) and x
    unseen = pd.DataFrame({"id": ["someone new"], "x": [3]})
    assert pipeline.predict(unseen).shape == (1,)


def test_group_codes_with_an_empty_cell_stay_whole_numbers(tmp_path):
    frame = table()
    frame["yhat"] = (frame["x"] > 0).astype(int)
    frame["region"] = frame["grp"].map({"a": 1, "b": 2}).astype(float)
    frame.loc[[4, 9], "region"] = np.nan  # read back as floats
    frame.loc[3, "y"] = np.nan
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    result = run_audit(path, label="y", group="region", pred="yhat", out=tmp_path / "out")
    overview = result.report.sections[0].data
    assert [g["group"] for g in overview["groups"]] == [1, 2]
    assert overview["labels"] == [0, 1]
    written = pd.read_csv(result.predictions_path)
    assert written["region"].dtype.kind == "i" and written["y"].dtype.kind == "i"


def test_whole_floats_beyond_exact_integers_stay_floats():
    from trustlab.audit.table import _whole_floats_as_int

    frame = pd.DataFrame({"g": [1e20, 2e20], "h": [1.0, 2.0]})
    out = _whole_floats_as_int(frame.copy(), ["g", "h"])
    assert out["g"].tolist() == [1e20, 2e20] and out["h"].tolist() == [1, 2]

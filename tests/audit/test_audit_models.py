"""Secure model loading and the preprocessing of the default zoo."""

import joblib
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from trustlab.audit.models import (
    aligned_probabilities,
    default_zoo,
    load_classifier,
    make_pipeline,
    trusted_library_modules,
)
from trustlab.errors import InputError


class DoublingTransformer(TransformerMixin, BaseEstimator):
    """A type skops does not know: loading a file with it needs an explicit trust."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float) * 2


CUSTOM_TYPE = f"{DoublingTransformer.__module__}.DoublingTransformer"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"num": rng.normal(size=60), "cat": rng.choice(["p", "q", "r"], size=60)})
    y = np.where(X["num"] > 0, "yes", "no")
    return X, y


def test_skops_model_loads_and_predicts_the_same(tmp_path, data):
    X, y = data
    model = make_pipeline(LogisticRegression(), X).fit(X, y)
    sio.dump(model, tmp_path / "m.skops")
    loaded = load_classifier(tmp_path / "m.skops")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_skops_with_an_unknown_type_is_refused_and_the_type_named(tmp_path):
    model = Pipeline([("double", DoublingTransformer()), ("lr", LogisticRegression())])
    model.fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    sio.dump(model, tmp_path / "custom.skops")
    with pytest.raises(InputError) as error:
        load_classifier(tmp_path / "custom.skops")
    assert CUSTOM_TYPE in str(error.value)
    assert f"--trust-type {CUSTOM_TYPE}" in str(error.value)


def test_skops_unknown_type_loads_once_trusted(tmp_path):
    model = Pipeline([("double", DoublingTransformer()), ("lr", LogisticRegression())])
    model.fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    sio.dump(model, tmp_path / "custom.skops")
    loaded = load_classifier(tmp_path / "custom.skops", trust_types=[CUSTOM_TYPE])
    assert loaded.predict([[3.0]]).tolist() == [1]


def test_only_library_types_are_trusted_automatically():
    modules = trusted_library_modules()
    assert modules[:3] == ("sklearn", "numpy", "scipy")
    assert set(modules) <= {"sklearn", "numpy", "scipy", "xgboost", "lightgbm"}


def test_pickle_is_refused_without_trust_and_explains_why(tmp_path, data):
    X, y = data
    joblib.dump(make_pipeline(LogisticRegression(), X).fit(X, y), tmp_path / "m.joblib")
    with pytest.raises(InputError, match=r"^model: .*runs any code.*--trust-pickle"):
        load_classifier(tmp_path / "m.joblib")


def test_pickle_loads_when_trusted(tmp_path, data):
    X, y = data
    model = make_pipeline(LogisticRegression(), X).fit(X, y)
    joblib.dump(model, tmp_path / "m.pkl")
    loaded = load_classifier(tmp_path / "m.pkl", trust_pickle=True)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("model.txt", b"hello", "a .skops file"),
        ("broken.skops", b"not a zip file", "could not read broken.skops"),
    ],
)
def test_unreadable_model_files_raise_input_error(tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_classifier(tmp_path / name)


def test_missing_model_file_raises(tmp_path):
    with pytest.raises(InputError, match="^model: expected an existing model file"):
        load_classifier(tmp_path / "absent.skops")


def test_unfitted_model_is_refused(tmp_path):
    sio.dump(LogisticRegression(), tmp_path / "raw.skops")
    with pytest.raises(InputError, match="a fitted estimator"):
        load_classifier(tmp_path / "raw.skops")


def test_preprocessing_one_hot_encodes_text_and_scales_numbers(data):
    X, _ = data
    prep = make_pipeline(LogisticRegression(), X).named_steps["prep"]
    out = np.asarray(prep.fit_transform(X))
    assert out.shape == (60, 3 + 1)
    np.testing.assert_allclose(out[:, :3].sum(axis=1), 1.0)  # one category per row
    np.testing.assert_allclose([out[:, 3].mean(), out[:, 3].std()], [0.0, 1.0], atol=1e-12)


def test_preprocessing_ignores_unseen_categories_and_imputes_gaps(data):
    X, y = data
    model = make_pipeline(LogisticRegression(), X).fit(X, y)
    new = pd.DataFrame({"num": [np.nan, 0.5], "cat": ["unseen", None]})
    assert model.predict(new).shape == (2,)


def test_default_zoo_is_the_documented_one():
    zoo = default_zoo(random_state=7)
    assert list(zoo) == ["logistic_regression", "random_forest", "gradient_boosting"]
    assert zoo["random_forest"].get_params()["n_estimators"] == 200
    assert zoo["random_forest"].get_params()["min_samples_leaf"] == 5
    assert zoo["gradient_boosting"].get_params()["random_state"] == 7


def test_probabilities_are_reordered_to_the_label_order(data):
    X, y = data
    model = make_pipeline(LogisticRegression(), X).fit(X, y)
    labels = np.array(["yes", "maybe", "no"])
    aligned = aligned_probabilities(model, X, labels)
    raw = model.predict_proba(X)
    np.testing.assert_allclose(aligned[:, 0], raw[:, list(model.classes_).index("yes")])
    np.testing.assert_allclose(aligned[:, 2], raw[:, list(model.classes_).index("no")])
    np.testing.assert_array_equal(aligned[:, 1], 0.0)

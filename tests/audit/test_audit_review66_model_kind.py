"""A model that scikit-learn calls a clusterer, regressor or outlier detector is refused (review 66).

``load_classifier`` promised to refuse a file that "is not a fitted classifier" but checked only
for a fitted ``predict``. Measured on the old models.py (120-row table, labels 0/1, groups a/b):
``trustlab audit --model km.skops`` with a fitted ``KMeans(2)`` audited its cluster ids as class
labels, exit 0, 'km: accuracy 0.817 (balanced 0.816)' (cluster numbers are arbitrary: 0.183 with
them swapped); a fully grown ``DecisionTreeRegressor`` on the 0/1 labels predicts 0.0 and 1.0 and
was audited the same way. Now ``InputError`` 'model: expected a classifier, got a clusterer
(KMeans in km.skops): its predictions are no class labels', for a file and for an estimator given
to ``run_audit``; classifiers, pipelines ending in one and objects without scikit-learn tags (a
plain ``predict``) are audited as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.cluster import KMeans
from sklearn.ensemble import IsolationForest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

from trustlab.audit import run_audit
from trustlab.audit.models import load_classifier, predict_labels
from trustlab.errors import InputError


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.normal(size=80)
    return pd.DataFrame(
        {"x": x, "g": np.tile(["a", "b"], 40), "y": (x + rng.normal(size=80) > 0).astype(int)}
    )


def _others(table):
    X, y = table[["x"]], table["y"]
    return {
        "clusterer": KMeans(2, n_init=1, random_state=0).fit(X),
        "regressor": DecisionTreeRegressor(random_state=0).fit(X, y),
        "outlier detector": IsolationForest(n_estimators=5, random_state=0).fit(X),
        "clusterer pipeline": make_pipeline(StandardScaler(), KMeans(2, n_init=1)).fit(X),
    }


@pytest.mark.parametrize(
    "kind", ["clusterer", "regressor", "outlier detector", "clusterer pipeline"]
)
def test_a_model_file_that_is_no_classifier_is_refused(table, kind, tmp_path):
    path = tmp_path / "m.skops"
    skops.io.dump(_others(table)[kind], path)
    with pytest.raises(InputError, match=f"expected a classifier, got a {kind.split()[0]}") as info:
        load_classifier(path)
    assert info.value.argument == "model"
    assert "m.skops" in str(info.value)


def test_an_estimator_given_to_run_audit_that_is_no_classifier_is_refused(table, tmp_path):
    with pytest.raises(InputError, match="got a clusterer") as info:
        run_audit(
            table,
            label="y",
            group="g",
            model=_others(table)["clusterer"],
            sections=["overview"],
            out=tmp_path / "out",
        )
    assert info.value.argument == "model"


def test_classifiers_and_untagged_models_still_predict(table, tmp_path):
    X, y = table[["x"]], table["y"]
    path = tmp_path / "c.skops"
    skops.io.dump(make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y), path)
    assert set(predict_labels(load_classifier(path), X)) <= {0, 1}

    class Threshold:  # no scikit-learn tags: trusted, as before
        def predict(self, X):
            return (np.asarray(X)[:, 0] > 0).astype(int)

    assert predict_labels(Threshold(), X).tolist() == (X["x"] > 0).astype(int).tolist()

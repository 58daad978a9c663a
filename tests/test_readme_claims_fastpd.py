"""README.md's FastPD paragraph: shap's interventional explainer silently cuts the background
to 100 rows (the reason FastPD's use of every background row is worth saying)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

shap = pytest.importorskip("shap")


@pytest.mark.parametrize("as_frame", [False, True])
def test_shap_interventional_explainer_keeps_100_of_1000_background_rows_without_a_warning(
    as_frame,
):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4))
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, X[:, 0] * X[:, 1])
    background = pd.DataFrame(X, columns=list("abcd")) if as_frame else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explainer = shap.TreeExplainer(
            model, data=background, feature_perturbation="interventional"
        )
    assert np.asarray(explainer.data).shape == (100, 4)

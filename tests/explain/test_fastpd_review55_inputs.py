"""Review 55: rows FastPD used to refuse with a misleading "expected numeric array-like".

A scipy sparse matrix of floats was refused as "expected numeric array-like, got an array of
shape (10, 3) and dtype float64"; it is now refused as a sparse matrix. A DataFrame of pandas'
nullable dtypes with pd.NA (which scikit-learn reads as NaN) was refused the same way; its NA is
now NaN: explained by a model that accepts missing values, refused as a missing value otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


def _frame():
    rng = np.random.default_rng(55)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    return X, X["a"] * X["b"] + X["c"]


def test_a_sparse_matrix_is_refused_as_sparse():
    X, y = _frame()
    explainer = FastPD(GradientBoostingRegressor(n_estimators=5).fit(X.to_numpy(), y)).fit(X[:20])
    with pytest.raises(InputError, match=r"^X_eval: expected a dense array, got a scipy sparse"):
        explainer.shap_values(sp.csr_matrix(X.to_numpy()[:5]))


def test_pandas_na_is_a_missing_value():
    X, y = _frame()
    rows = X[40:45].astype("Float64")
    rows.iloc[0, 0] = pd.NA
    as_nan = rows.to_numpy(dtype=float, na_value=np.nan)
    model = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
    explainer = FastPD(model).fit(X[:20].astype("Float64"))
    phi = explainer.shap_values(rows)
    assert np.array_equal(phi, explainer.shap_values(as_nan))
    total = phi.sum(axis=1) + explainer.expected_value_
    assert np.abs(total - model.predict(rows)).max() <= 1e-12
    strict = FastPD(GradientBoostingRegressor(n_estimators=5).fit(X, y)).fit(X[:20])
    with pytest.raises(
        InputError, match=r"expected no missing values .* got NaN at index \(0, 0\)"
    ):
        strict.shap_values(rows)

"""Review 55 (second pass): pandas' NA reached through a Pipeline's transform.

A transform with pandas output (``set_output(transform="pandas")``) passing nullable Float64
columns on keeps pd.NA, which the pipeline's own tree model reads as NaN; FastPD refused it as
"expected the pipeline's transform to give numbers, got object values". It is now NaN there too,
as in rows given directly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline

from trustlab.explain import FastPD


def test_pandas_na_from_a_pipeline_transform_is_a_missing_value():
    rng = np.random.default_rng(5507)
    X = pd.DataFrame(rng.normal(size=(80, 2)), columns=["a", "b"])
    y = 2 * X["a"] - X["b"]
    passthrough = ColumnTransformer([("p", "passthrough", ["a", "b"])])
    model = HistGradientBoostingRegressor(max_iter=4)
    pipe = make_pipeline(passthrough.set_output(transform="pandas"), model).fit(X, y)
    rows = X[:6].astype("Float64")
    rows.iloc[1, 0] = pd.NA
    explainer = FastPD(pipe).fit(X[:20].astype("Float64"))
    phi = explainer.shap_values(rows)
    total = phi.sum(axis=1) + explainer.expected_value_
    assert np.abs(total - pipe.predict(rows)).max() <= 1e-12
    as_nan = rows.to_numpy(dtype=float, na_value=np.nan)
    assert np.array_equal(phi, explainer.shap_values(pd.DataFrame(as_nan, columns=["a", "b"])))

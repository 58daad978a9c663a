"""Review 55 (second pass): explain_table with a Pipeline fitted on an array and a frame of
nullable dtypes with pd.NA. The frame went to the transform as ``to_numpy()`` (an object array
holding pd.NA), and scikit-learn's StandardScaler failed on it ('data: the pipeline's transform
... failed on it: TypeError: ... not 'NAType''), though the pipeline predicts on that frame and
explain_table explains the same rows with NaN. pd.NA is now NaN there too."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from trustlab.explain import explain_table


def test_pandas_na_reaches_an_array_fitted_pipeline_as_nan():
    rng = np.random.default_rng(5511)
    A = rng.normal(size=(60, 2))
    model = HistGradientBoostingRegressor(max_iter=3)
    pipe = make_pipeline(StandardScaler(), model).fit(A, A[:, 0] - A[:, 1])
    frame = pd.DataFrame(A, columns=["a", "b"]).astype("Float64")
    frame.iloc[2, 0] = pd.NA
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # feature names: the pipeline saw an array
        ours = explain_table(pipe, frame, rows=[0, 2], random_state=0)
        as_nan = explain_table(pipe, frame.astype(float), rows=[0, 2], random_state=0)
        predicted = pipe.predict(frame)[[0, 2]]
    assert np.array_equal(ours.shap_values, as_nan.shap_values)
    total = ours.shap_values.sum(axis=1) + ours.expected_value[0]
    assert np.abs(total - predicted).max() <= 1e-12

"""Review 55 (second pass): FastPD's DataFrame conversion (aaa2824, for pandas' NA) also turned
datetime and timedelta columns into numbers in their storage unit (a date 1970-03-27 became
7.3e12 microseconds), so rows the model itself refuses (scikit-learn cannot read such a column)
were explained without a word; they were refused before and are again. So were complex columns
(the imaginary part dropped) where the float conversion had said 'expected real numbers'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


@pytest.mark.parametrize("kind", ["datetime", "timedelta", "datetime-tz", "complex"])
def test_date_and_duration_columns_are_refused_as_before(kind):
    rng = np.random.default_rng(5509)
    days = rng.integers(0, 100, 60)
    X = pd.DataFrame({"a": rng.normal(size=60), "t": days.astype(float)})
    explainer = FastPD(GradientBoostingRegressor(n_estimators=3).fit(X, X["a"] + days)).fit(X)
    column = {
        "datetime": pd.to_datetime(days[:3], unit="D"),
        "timedelta": pd.to_timedelta(days[:3], unit="D"),
        "datetime-tz": pd.to_datetime(days[:3], unit="D").tz_localize("UTC"),
        "complex": days[:3] + 1j,  # its imaginary part was dropped (a ComplexWarning)
    }[kind]
    rows = pd.DataFrame({"a": X["a"][:3], "t": column})
    want = "real numbers" if kind == "complex" else "numbers, not dates or durations"
    with pytest.raises(InputError, match=rf"^X_eval: expected {want}, got DataFrame"):
        explainer.shap_values(rows)

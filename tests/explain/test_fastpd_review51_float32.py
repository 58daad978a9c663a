"""Finite values a float32 model cannot read (review 51: |x| > 3.4e38 for scikit-learn trees and
xgboost, which cast their inputs to float32). The model refuses them ('Input X contains infinity
or a value too large for dtype(float32)'); FastPD raised that ValueError when such a row was one
its output is checked on ('unexpected failure', exit 1, on the command line; xgboost printed a
C++ backtrace) and otherwise explained the row as if the value were infinity."""

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD
from trustlab.explain.fastpd import plan_table

RNG = np.random.default_rng(7)
X = RNG.normal(size=(120, 3))
Y = X[:, 0] + X[:, 1]
HUGE = np.copy(X)
HUGE[4, 1] = 1e300


@pytest.mark.parametrize(
    "model",
    [RandomForestRegressor(5, max_depth=3, random_state=0), xgb.XGBRegressor(n_estimators=5)],
    ids=["forest", "xgboost"],
)
def test_a_value_beyond_float32_is_refused_naming_where(model):
    model.fit(X, Y)
    with pytest.raises(InputError, match=r"background: .*float32.*1e\+300 at index \(4, 1\)"):
        FastPD(model).fit(HUGE)
    explainer = FastPD(model).fit(X)
    with pytest.raises(InputError, match=r"X_eval: .*1e\+300 at index \(4, 1\)"):
        explainer.shap_values(HUGE)
    table = pd.DataFrame(HUGE, columns=["a", "b", "c"])
    with pytest.raises(InputError, match=r"data: .*1e\+300 in column 'b' at row 4"):
        plan_table(model, table)


def test_a_float64_model_reads_such_values():
    model = HistGradientBoostingRegressor(max_iter=5).fit(X, Y)
    explainer = FastPD(model).fit(HUGE)
    phi = explainer.shap_values(HUGE[:6])
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, model.predict(HUGE[:6]), atol=1e-10
    )


def test_a_pd_grid_beyond_float32_is_refused():
    explainer = FastPD(RandomForestRegressor(5, max_depth=3, random_state=0).fit(X, Y)).fit(X)
    with pytest.raises(InputError, match="grid: expected values within float32's range"):
        explainer.pd_grid(0, [0.0, 1e300])
    assert explainer.pd_grid(0, [0.0, 3e38]).values.shape == (2, 1)

"""Grids given to ``FastPD.pd_grid`` (review of the grid argument).

- A NaN grid value was refused even for models that route missing values (HistGradientBoosting,
  xgboost, LightGBM), although ``pd_function`` evaluates them at NaN; infinity stays refused.
- A one-point grid of one feature given as a plain array (``[0.5]``, ``np.array([0.5])``) was
  read as a sequence holding one grid and refused as "a 0-dimensional array".
"""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD

RNG = np.random.default_rng(11)
X = RNG.normal(size=(300, 3))
X[RNG.random(300) < 0.2, 0] = np.nan
Y = np.where(np.isnan(X[:, 0]), 3.0, X[:, 0]) + X[:, 1] * X[:, 2]
BACKGROUND = X[:80]


def brute_pd(model, features, point):
    """mean over the background of the model with ``features`` set to ``point``."""
    rows = BACKGROUND.copy()
    rows[:, features] = point
    return model.predict(rows).mean()


@pytest.fixture(scope="module")
def routed():
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, Y)
    return model, FastPD(model).fit(BACKGROUND)


def test_a_nan_grid_value_is_the_pd_at_a_missing_value(routed):
    model, explainer = routed
    curve = explainer.pd_grid(0, [0.0, np.nan])
    expected = [brute_pd(model, [0], 0.0), brute_pd(model, [0], np.nan)]
    np.testing.assert_allclose(curve.values[:, 0], expected, rtol=1e-12, atol=1e-12)
    assert abs(expected[1] - expected[0]) > 1.0  # the missing value takes its own branch
    pair = explainer.pd_grid([0, 1], [[np.nan, 1.0], [0.5]])
    np.testing.assert_allclose(
        pair.values[:, 0, 0],
        [brute_pd(model, [0, 1], [np.nan, 0.5]), brute_pd(model, [0, 1], [1.0, 0.5])],
        rtol=1e-12,
        atol=1e-12,
    )
    assert curve.to_dict()["grid"] == [[0.0, None]]


def test_infinity_and_nan_for_a_model_without_missing_values_stay_refused(routed):
    _, explainer = routed
    with pytest.raises(InputError, match="grid: expected finite values, got -inf"):
        explainer.pd_grid(0, [0.0, -np.inf])
    model = GradientBoostingRegressor(n_estimators=5, random_state=0)
    plain = FastPD(model.fit(np.nan_to_num(X), Y)).fit(np.nan_to_num(BACKGROUND))
    with pytest.raises(InputError, match="grid: expected finite values, got nan"):
        plain.pd_grid(0, [0.0, np.nan])


@pytest.mark.parametrize("grid", [[0.5], np.array([0.5]), (0.5,), [[0.5]], [np.array([0.5])]])
def test_a_one_point_grid_is_accepted_in_every_form(routed, grid):
    model, explainer = routed
    curve = explainer.pd_grid(1, grid)
    assert [g.tolist() for g in curve.grid] == [[0.5]]
    np.testing.assert_allclose(curve.values[:, 0], [brute_pd(model, [1], 0.5)], rtol=1e-12)


def test_a_plot_leaves_out_nan_grid_values_and_keeps_the_line(routed):
    import matplotlib

    matplotlib.use("Agg")
    _, explainer = routed
    curve = explainer.pd_grid(1, [0.0, np.nan, 1.0])
    (line,) = curve.plot().get_lines()
    np.testing.assert_allclose(line.get_xdata(), [0.0, 1.0])
    np.testing.assert_allclose(line.get_ydata(), curve.values[[0, 2], 0])
    pair = explainer.pd_grid([0, 1], [[np.nan, 0.0, 1.0], [0.0, 1.0]])
    ax = pair.plot()
    assert ax.collections  # a contour of the 2 x 2 values that are not missing
    with pytest.raises(InputError, match="grid: expected a value that is not missing"):
        explainer.pd_grid(0, [np.nan]).plot()

"""A 2-D PD plot where one feature has a single value in the background (review F4).

The default grid of a constant background column has one point; matplotlib's contour needs two,
so the plot raised TypeError. It now draws the PD along the other feature as a line.
"""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402

from trustlab.explain import FastPD  # noqa: E402


@pytest.mark.parametrize("pair", [[2, 0], [0, 2]])
def test_a_2d_pd_plot_with_a_single_valued_feature_draws_a_line(pair):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, X[:, 0] * X[:, 2])
    background = X[:100].copy()
    background[:, 2] = 1.0
    curve = FastPD(model).fit(background).pd_grid(pair)
    ax = curve.plot()
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_xdata(), curve.grid[pair.index(0)])
    np.testing.assert_allclose(line.get_ydata(), curve.values[..., 0].ravel())
    assert ax.get_xlabel() == "x0" and "x2 = 1" in ax.get_legend().get_texts()[0].get_text()

"""PD grids of a feature that is missing (NaN) in every background row (review F1).

A default grid is drawn from the background's observed values; such a feature has none. Asking
for its curve is refused in one line naming the argument, and ``explain`` draws its default
curves for the most important features that do have values.
"""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


@pytest.fixture(scope="module")
def explainer():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X[:300, 1] = np.nan  # missing in every row of the background below
    y = X[:, 0] + np.where(np.isnan(X[:, 1]), 0.0, 3 * X[:, 1])
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    return FastPD(model, feature_names=["a", "rare", "c"]).fit(X[:100]), X


def test_pd_grid_of_a_feature_missing_in_the_whole_background_is_refused(explainer):
    fp, _ = explainer
    with pytest.raises(InputError, match=r"^features: .*'rare'.* all 100 background rows"):
        fp.pd_grid("rare")
    with pytest.raises(InputError, match=r"^features: .*'rare'"):
        fp.pd_grid(["a", "rare"])


def test_a_given_grid_still_works_and_equals_the_brute_force_average(explainer):
    fp, X = explainer
    grid = np.array([-1.0, 0.0, 1.0])
    curve = fp.pd_grid("rare", grid=grid)
    model, bg = fp.model, fp.background_
    brute = []
    for value in grid:
        Z = bg.copy()
        Z[:, 1] = value
        brute.append(model.predict(Z).mean())
    np.testing.assert_allclose(curve.values[:, 0], brute, atol=1e-12)


def test_explain_refuses_such_a_feature_when_named(explainer):
    fp, X = explainer
    with pytest.raises(InputError, match=r"^features: .*'rare'"):
        fp.explain(X[300:320], features=["rare"])


def test_explain_draws_default_curves_of_the_features_with_values(explainer):
    fp, X = explainer
    explanation = fp.explain(X[300:340])
    assert "rare" in explanation.importance.top_features(3)  # important, but no grid
    drawn = [c.features[0] for c in explanation.partial_dependence]
    assert drawn == [n for n in explanation.importance.top_features(3) if n != "rare"]
    assert all(len(c.grid[0]) > 1 for c in explanation.partial_dependence)

"""Review 65: a learner's decision_function (and predict_proba) takes ||w|| as the market does,
exact at any scale of the weights. It used np.linalg.norm(coef_), which squares the weights: for
coef_ = (1.585e-162, 0) the squares are subnormal and the reach ||w|| b_i / rho came out 80%
too large (the price-setting user's margin 0.80 x 1.585e-162, not 0); for (1e200, 0) the
squares overflow, ||w|| was inf and a user with budget 0 got a NaN margin and probability."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab.strategic import NaiveMarketClassifier

# distances 1, 2, 0.5, -1, 3 along w = (c, 0): the worked example's market (price 1) plus a
# rejected user with no budget
X = np.array([[-1.0, 0.0], [-2.0, 0.0], [-0.5, 0.0], [1.0, 0.0], [-3.0, 0.0]])
BUDGETS = np.array([2.0, 2.0, 2.0, 1.0, 0.0])
MARGINS = [1.0, 0.0, 1.5, 2.0, -3.0]  # w'x + b0 + ||w|| b_i / rho at c = 1


@pytest.mark.parametrize("c", [1.585e-162, 1e200])
def test_margins_scale_with_the_weights(c):
    clf = NaiveMarketClassifier().fit(X, [0, 1, 0, 1, 1])
    clf.coef_, clf.intercept_ = np.array([c, 0.0]), 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        margins = clf.decision_function(X, BUDGETS)
        proba = clf.predict_proba(X, BUDGETS)
    # each margin is c times the c = 1 margin up to a rounding or two (rel 1e-12)
    assert (margins / c).tolist() == pytest.approx(MARGINS, rel=1e-12, abs=0.0)
    assert not np.isnan(proba).any()
    assert (proba.argmax(axis=1) == [1, 1, 1, 1, 0]).all()

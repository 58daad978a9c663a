"""Review 63: best_response at a price whose costs pass the float64 range reports them as inf (as
documented) without numpy's 'overflow encountered in multiply' RuntimeWarning, which leaked
for a scalar price (1.7e308: the user at distance 2 costs 3.4e308) and for a price vector."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from trustlab.strategic import best_response

X = [[-1.0], [-2.0], [-0.5], [1.0]]  # distances 1, 2, 0.5, -1 for w = 1, b0 = 0
BUDGETS = [2.0, 2.0, 2.0, 1.0]


@pytest.mark.parametrize("prices", [1.7e308, [1.7e308]])
def test_costs_past_float64_are_inf_without_a_warning(prices):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = best_response([1.0], 0.0, X, BUDGETS, prices=prices)
    assert result.cost.tolist() == [1.7e308, math.inf, 8.5e307, 0.0]
    assert not result.buys.any() and result.n_unable_to_move == 1
    assert result.predictions.tolist() == [0, 0, 0, 1]
    np.testing.assert_array_equal(result.X_after, X)

"""Review 65: best_response reports a purchase whose amount passes the float64 range as inf (as
documented) without numpy's 'overflow encountered in divide' RuntimeWarning. With a weight of
1e-320 on the only useful feature, the user 1e10 of score short buys 1e10 / 1e-320 = 1e330 units
(for 1e10 at price 1 per unit distance, or at 1e-320 per unit of that feature)."""

from __future__ import annotations

import math
import warnings

import pytest

from trustlab.strategic import best_response


@pytest.mark.parametrize("prices", [1.0, [1e-320, 1.0]])
def test_amounts_past_float64_are_inf_without_a_warning(prices):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = best_response([1e-320, -1.0], 0.0, [[0.0, 1e10]], [1e11], prices=prices)
    assert result.buys.tolist() == [True]
    assert result.cost.tolist() == [pytest.approx(1e10, rel=1e-12)]
    assert result.purchases.tolist() == [[math.inf, 0.0]]
    assert result.X_after.tolist() == [[math.inf, 1e10]]
    assert result.predictions.tolist() == [1]

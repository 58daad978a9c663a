"""Large weights whose norm fits in a float64 although its square does not: the market is priced
(it was refused as "w: ... norm ||w|| ... overflow"), as tiny weights whose square underflows
are (review 5)."""

import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.strategic import best_response, market_price


@pytest.mark.parametrize("scale", [1e300, 1e200])
def test_weights_whose_square_overflows_give_the_scaled_market(scale):
    w, X, budgets = [1.0, 1.0], [[-1.0, 0.0], [-2.0, 0.0], [1.0, 0.0]], [1.0, 1.0, 1.0]
    plain = market_price(w, 0.0, X, budgets)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either
        big = market_price(np.multiply(w, scale), 0.0, X, budgets)
        response = best_response(np.multiply(w, scale), 0.0, X, budgets, big.price)
    assert big.price == pytest.approx(plain.price, rel=1e-15)
    assert np.allclose(big.distances, plain.distances, rtol=1e-15)
    assert np.array_equal(big.buyers, plain.buyers) and big.revenue == pytest.approx(plain.revenue)
    assert np.array_equal(response.buys, plain.buyers)


def test_a_norm_beyond_float64_is_still_refused_naming_w():
    with pytest.raises(InputError, match="norm") as info:
        market_price([1.5e308, 1.5e308], 0.0, [[-1.0, -1.0]], [1.0])
    assert info.value.argument == "w"

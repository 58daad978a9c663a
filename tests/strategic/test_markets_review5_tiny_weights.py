"""Review 5: tiny weights, costs per unit of score beyond float64, and ``market_forms`` at price 0.

``||w||^2`` of a tiny non-zero ``w`` underflowed to 0, and the user was refused as if the scores
overflowed; a price per unit of score ``p_j / w_j`` (or ``rho / ||w||``) beyond float64 made
the cost inf and counted the user as one no feature can help, though the move costs 1e10."""

import warnings

import numpy as np
import pytest

from trustlab.strategic import best_response, market_outcome, market_price


def _quiet(call, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way
        return call(*args)


def test_a_tiny_weight_vector_is_not_refused_as_an_overflow():
    res = _quiet(market_price, [1e-300], 0.0, [[-1.0], [-2.0]], [1.0, 1.0])
    same = market_price([1.0], 0.0, [[-1.0], [-2.0]], [1.0, 1.0])  # the same classifier
    assert res.price == same.price and res.buyers.tolist() == same.buyers.tolist()


@pytest.mark.parametrize("prices", [[1e10], 1e10])
@pytest.mark.parametrize(("budget", "buys"), [(1.0, False), (1e11, True)])
def test_a_cost_per_unit_of_score_beyond_float64_is_the_move_s_true_cost(prices, budget, buys):
    # one unit of the feature (price 1e10) gains the missing score 1e-300
    br = _quiet(best_response, [1e-300], 0.0, [[-1.0]], [budget], prices)
    assert br.cost.tolist() == [1e10]
    assert br.buys.tolist() == [buys] and br.n_unable_to_move == 0
    assert br.purchases.tolist() == [[1.0 if buys else 0.0]]


def test_the_cheapest_of_features_whose_ratios_overflow_is_bought():
    br = _quiet(best_response, [1e-300, 1e-300], 0.0, [[-1.0, 0.0]], [1e20], [1e11, 1e10])
    assert br.cost.tolist() == [1e10] and br.purchases.tolist() == [[0.0, 1.0]]
    # a feature not for sale is still never bought
    br = _quiet(best_response, [1e-300, 1e-300], 0.0, [[-1.0, 0.0]], [1e20], [1e11, np.inf])
    assert br.cost.tolist() == [1e11] and br.purchases.tolist() == [[1.0, 0.0]]


def test_a_cost_beyond_float64_is_inf_and_nobody_buys():
    br = _quiet(best_response, [1e-300], 0.0, [[-1e10]], [1e300], [1e300])
    assert br.cost.tolist() == [np.inf] and not br.buys.any() and br.n_unable_to_move == 1


def test_market_forms_at_price_zero_with_buyers_as_documented():
    res = market_outcome([1.0], 0.0, [[-1.0], [1.0]], [1.0, 1.0], 0.0)
    assert res.n_buyers == 1 and res.market_forms
    assert "finite price" in type(res).market_forms.__doc__
    assert "positive, finite" not in type(res).market_forms.__doc__

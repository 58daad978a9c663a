"""Each user's cost and decision against a linear-program best response (scipy linprog, HiGHS):
min p'delta s.t. w'(x + delta) + b0 >= 0, delta >= 0."""

import numpy as np
import pytest
from scipy.optimize import linprog

from trustlab.strategic import best_response, market_price


def lp_cost(w, score, prices):
    """Minimum cost of delta >= 0 with w'delta >= -score (score = w'x + b0 < 0)."""
    res = linprog(
        c=prices,
        A_ub=-w[None, :],
        b_ub=[score],
        bounds=[(0, None)] * w.size,
        method="highs",
    )
    assert res.status == 0, res.message
    return res.fun, res.x


def population(seed, m=40, d=4):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w[0] = abs(w[0]) + 0.2  # mixed signs, at least one feature worth buying
    X = np.abs(rng.normal(size=(m, d)))  # features are non-negative quantities
    b0 = -float(np.median(X @ w))
    return w, b0, X, rng.lognormal(sigma=0.8, size=m)


@pytest.mark.parametrize("seed", range(4))
def test_market_cost_equals_the_lp_best_response(seed):
    w, b0, X, budgets = population(seed)
    res = market_price(w, b0, X, budgets)
    rho = res.price
    feature_prices = rho * np.maximum(w, 0) / np.linalg.norm(w)
    assert np.allclose(res.feature_prices, feature_prices, rtol=1e-15, atol=0)
    scores = X @ w + b0
    checked = setters = 0
    for i in np.flatnonzero(scores < 0):
        cost, delta = lp_cost(w, scores[i], feature_prices)
        assert cost == pytest.approx(rho * res.distances[i], abs=1e-9)
        if res.buyers[i]:
            assert res.costs[i] == pytest.approx(cost, abs=1e-9)
        if abs(budgets[i] - cost) <= 1e-9:
            # the user whose budget sets the price pays all of it, and buys
            assert res.buyers[i] and budgets[i] / res.distances[i] == rho
            setters += 1
        else:
            assert res.buyers[i] == (cost <= budgets[i])
        checked += 1
    assert checked >= 10 and res.n_buyers >= 1 and setters >= 1


@pytest.mark.parametrize("seed", range(4))
def test_best_response_to_per_feature_prices_equals_the_lp(seed):
    w, b0, X, budgets = population(seed)
    prices = np.random.default_rng(seed + 10).uniform(0.2, 3.0, size=w.size)
    br = best_response(w, b0, X, budgets, prices)
    scores = X @ w + b0
    for i in range(X.shape[0]):
        if scores[i] >= 0:
            assert br.cost[i] == 0.0 and br.predictions[i] == 1 and not br.buys[i]
            continue
        cost, _ = lp_cost(w, scores[i], prices)
        assert br.cost[i] == pytest.approx(cost, abs=1e-9)
        assert br.buys[i] == (cost <= budgets[i])
    # what buyers bought costs what was charged and puts them on the boundary, never beyond
    paid = br.purchases @ prices
    assert np.allclose(paid[br.buys], br.cost[br.buys], atol=1e-12)
    after = br.X_after @ w + b0
    assert np.allclose(after[br.buys], 0.0, atol=1e-12)
    assert (br.purchases[:, w <= 0] == 0).all()
    assert np.array_equal(br.predictions, ((scores >= 0) | br.buys).astype(int))


@pytest.mark.parametrize("seed", range(8))
def test_scalar_price_best_response_matches_the_market(seed):
    w, b0, X, budgets = population(seed, m=200)
    res = market_price(w, b0, X, budgets)
    br = best_response(w, b0, X, budgets, res.price)
    assert np.array_equal(br.buys, res.buyers)
    assert np.array_equal(br.predictions, res.predictions)
    assert np.allclose(br.cost[res.buyers], res.costs[res.buyers], rtol=1e-14)
    # the per-feature vector form of the same price gives the same decisions: the user whose
    # budget sets the price pays exactly that budget, and a cost one ulp above it (p_j / w_j
    # rounds) still buys
    vector = best_response(w, b0, X, budgets, res.feature_prices)
    assert np.allclose(vector.cost, br.cost, rtol=1e-12)
    assert np.array_equal(vector.buys, res.buyers)
    assert np.array_equal(vector.predictions, res.predictions)


def test_free_feature_and_infinite_price():
    w, X = np.array([1.0, 2.0]), np.array([[0.0, 0.0], [1.0, 1.0]])
    free = best_response(w, -2.0, X, [0.0, 0.0], [0.0, 5.0])
    assert free.buys.tolist() == [True, False] and free.cost.tolist() == [0.0, 0.0]
    closed = best_response(w, -2.0, X, [9.0, 9.0], np.inf)
    assert not closed.buys.any() and closed.cost[0] == np.inf
    assert "0 of 2 users buy" in closed.summary() and closed.to_dict()["n_unable_to_move"] == 1

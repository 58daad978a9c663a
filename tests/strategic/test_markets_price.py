"""The exact market price: the spec's worked example, brute force over every breakpoint and over a
dense price grid, whole tie groups, the outcome at a price and the welfare/burden definitions."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trustlab.strategic import market_outcome, market_price

SETTINGS = settings(max_examples=60, deadline=None)


def beta_of(u, b):
    """Budget per distance for rejected users, -inf for the others (never buy at price > 0)."""
    beta = np.full(u.shape, -np.inf)
    rejected = u > 0
    beta[rejected] = b[rejected] / u[rejected]
    return beta


def revenue(u, b, rho):
    """R(rho) = rho * sum of u_i over rejected users with b_i / u_i >= rho (the definition)."""
    return rho * u[beta_of(u, b) >= rho].sum()


def revenue_on_grid(u, b, grid):
    """R at each price of ``grid`` at once (a 0/1 matrix of who buys times the distances)."""
    buys = beta_of(u, b)[None, :] >= grid[:, None]
    return grid * (buys @ np.where(u > 0, u, 0.0))


def brute_force(u, b):
    """Revenue at every candidate price (each user's b_i / u_i > 0), O(m^2); the lowest price
    among the maximisers, as market_price documents."""
    beta = beta_of(u, b)
    candidates = np.unique(beta[beta > 0])
    if candidates.size == 0:
        return math.inf, 0.0
    revenues = np.array([revenue(u, b, rho) for rho in candidates])
    best = revenues.max()
    return float(candidates[revenues == best].min()), float(best)


def exact_brute_force(u, b):
    """brute_force in exact rationals for integer distances and budgets: (lowest maximising price,
    maximal revenue) as Fractions. Float revenues split exact ties (u = 1, 3, 6 and b = 2, 5, 4:
    5/3 * 4 and 2/3 * 10 are 6.666666666666667 and 6.666666666666666), so ties are decided here.
    """
    rows = [(Fraction(int(ui)), Fraction(int(bi))) for ui, bi in zip(u, b, strict=True)]
    candidates = sorted({bi / ui for ui, bi in rows if ui > 0 and bi > 0})
    best = None
    for rho in candidates:  # increasing: only a strictly larger revenue moves the best
        total = rho * sum(ui for ui, bi in rows if ui > 0 and bi >= rho * ui)
        if best is None or total > best[1]:
            best = (rho, total)
    return (math.inf, Fraction(0)) if best is None else best


def one_feature(u):
    """w = [1], b0 = 0 and X = -u give exactly the distances u."""
    return [1.0], 0.0, -np.asarray(u, dtype=float)[:, None]


def test_worked_example_from_the_spec():
    w, b0, X = one_feature([1.0, 2.0, 0.5, -1.0])
    res = market_price(w, b0, X, [2.0, 2.0, 2.0, 1.0])
    assert res.price == 1.0 and res.revenue == 3.5
    assert res.buyers.tolist() == [True, True, True, False]
    assert res.predictions.tolist() == [1, 1, 1, 1]
    assert res.curve_prices.tolist() == [4.0, 2.0, 1.0]
    assert res.curve_revenues.tolist() == [2.0, 3.0, 3.5]


@pytest.mark.parametrize("seed", range(6))
def test_price_equals_breakpoint_brute_force_and_dense_grid(seed):
    rng = np.random.default_rng(seed)
    m, d = rng.integers(20, 300), 3
    X = rng.normal(size=(m, d))
    w = rng.normal(size=d)
    w[0] = abs(w[0]) + 0.1  # at least one feature worth buying
    b0 = rng.normal()
    budgets = rng.lognormal(sigma=1.0, size=m)
    res = market_price(w, b0, X, budgets)
    u = -(X @ w + b0) / np.linalg.norm(w)
    price, best = brute_force(u, budgets)
    assert res.price == price  # the candidates are the same floats, no tie at random
    assert res.revenue == pytest.approx(best, rel=1e-12)
    grid = np.linspace(0.0, 1.05 * beta_of(u, budgets).max(), 20_000)
    grid_revenue = revenue_on_grid(u, budgets, grid)
    assert grid_revenue.max() <= best * (1 + 1e-12)
    # the grid confirms the optimum up to its resolution (R rises with slope = demand)
    step = grid[1] - grid[0]
    assert grid_revenue.max() >= best - step * u[u > 0].sum()


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(-3, 6), st.integers(0, 8)),
        min_size=1,
        max_size=40,
    )
)
@example([(1, 2), (3, 5), (6, 4)])  # revenues 20/3 at 5/3 and at 2/3: rounding splits them
def test_price_equals_brute_force_with_ties_exactly(rows):
    u = np.array([r[0] for r in rows], dtype=float)
    b = np.array([r[1] for r in rows], dtype=float)
    res = market_price(*one_feature(u), b)
    exact_price, exact_best = exact_brute_force(u, b)
    price, best = float(exact_price), float(exact_best)  # b_i / u_i: one correctly rounded division
    assert res.price == price
    assert res.revenue == pytest.approx(best, rel=1e-12)  # price * demand rounds
    assert res.optimal_revenue == res.revenue
    if math.isfinite(price):
        grid = np.linspace(0.0, 9.0, 2_001)
        assert revenue_on_grid(u, b, grid).max() <= best * (1 + 1e-12)
        # every user whose budget-per-distance equals the price buys: the whole tie group
        assert np.array_equal(res.buyers, beta_of(u, b) >= price)
        assert res.revenue == price * u[res.buyers].sum()
    else:
        assert not res.buyers.any() and res.revenue == 0.0


@SETTINGS
@given(st.lists(st.tuples(st.integers(-5, 0), st.integers(0, 9)), min_size=1, max_size=30))
def test_all_positive_population_has_no_market(rows):
    u = np.array([r[0] for r in rows], dtype=float)
    b = np.array([r[1] for r in rows], dtype=float)
    res = market_price(*one_feature(u), b)
    assert res.price == math.inf and res.revenue == 0.0 and not res.market_forms
    assert res.predictions.tolist() == [1] * len(rows)
    assert res.welfare == b.sum()
    assert res.to_dict()["price"] is None


def test_whole_tie_group_buys_at_its_price():
    # beta = 2 for all three: a prefix stopping inside the group would charge only part of it
    res = market_price(*one_feature([1.0, 1.0, 2.0, 0.5]), [2.0, 2.0, 4.0, 0.1])
    assert res.price == 2.0
    assert res.buyers.tolist() == [True, True, True, False]
    assert res.revenue == 2.0 * 4.0
    assert res.curve_prices.tolist() == [2.0, 0.2] and res.curve_revenues.tolist() == [8.0, 0.9]


def test_equal_revenues_choose_the_lowest_price():
    # price 3 sells to one user (u=2): 6; price 1 sells to both (u=2, 4): 6
    res = market_price(*one_feature([2.0, 4.0]), [6.0, 4.0])
    assert res.curve_revenues.tolist() == [6.0, 6.0]
    assert res.price == 1.0 and res.buyers.tolist() == [True, True]


def test_zero_budget_users_never_buy_and_set_no_price():
    res = market_price(*one_feature([1.0, 3.0, 2.0]), [0.0, 3.0, 0.0])
    assert res.price == 1.0 and res.buyers.tolist() == [False, True, False]
    assert market_price(*one_feature([1.0]), [0.0]).price == math.inf


def test_no_positive_weight_means_nobody_can_buy():
    X = np.array([[1.0, 2.0], [3.0, 0.5]])
    res = market_price([-1.0, 0.0], 0.5, X, [10.0, 10.0])
    assert res.price == math.inf and not res.buyers.any()
    assert res.predictions.tolist() == [0, 0]


@pytest.mark.parametrize("seed", range(3))
def test_market_is_invariant_to_the_scale_of_the_classifier(seed):
    rng = np.random.default_rng(seed)
    X, w, b = rng.normal(size=(80, 2)), np.array([1.0, -0.5]), rng.lognormal(size=80)
    base = market_price(w, 0.3, X, b)
    scaled = market_price(4.0 * w, 1.2, X, b)
    assert scaled.price == pytest.approx(base.price, rel=1e-12)
    assert np.array_equal(scaled.buyers, base.buyers)
    richer = market_price(w, 0.3, X, 2.0 * b)  # budgets in another currency
    assert richer.price == 2.0 * base.price and np.array_equal(richer.buyers, base.buyers)


@pytest.mark.parametrize("seed", range(3))
def test_outcome_welfare_burden_and_accuracy_follow_their_definitions(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    b = rng.lognormal(size=120)
    w, b0 = np.array([1.0, 0.2]), -0.4
    u = -(X @ w + b0) / np.linalg.norm(w)
    optimum = market_price(w, b0, X, b, y=y)
    for rho in (optimum.price, 0.5 * optimum.price, 3.0):
        res = market_outcome(w, b0, X, b, rho, y=y)
        buyers = beta_of(u, b) >= rho
        accepted = (u <= 0) | buyers
        assert np.array_equal(res.buyers, buyers)
        assert res.revenue == pytest.approx(rho * u[buyers].sum(), rel=1e-12)
        assert res.revenue == pytest.approx(optimum.revenue_at(rho), rel=1e-12)
        assert res.welfare == pytest.approx(b[accepted].sum() - rho * u[buyers].sum(), rel=1e-12)
        assert res.social_burden == pytest.approx(rho * u[(y == 1) & ~accepted].sum(), rel=1e-12)
        assert res.accuracy == np.mean(accepted == (y == 1))
        assert res.accuracy_without_market == np.mean((u <= 0) == (y == 1))
        assert res.optimal_price == optimum.price
        assert res.revenue <= optimum.revenue * (1 + 1e-12)
        assert np.allclose(res.feature_prices, rho * np.maximum(w, 0) / np.linalg.norm(w))


def test_labels_in_plus_minus_one_and_dataframes_are_accepted():
    X = pd.DataFrame({"a": [-1.0, -2.0, -0.5, 1.0]})
    res01 = market_price([1.0], 0.0, X, pd.Series([2, 2, 2, 1]), y=[1, 0, 0, 1])
    respm = market_price([1.0], 0.0, X, [2, 2, 2, 1], y=[1, -1, -1, 1])
    assert res01.accuracy == respm.accuracy == 0.5


def test_large_population_price_beats_its_neighbouring_breakpoints():
    # at m = 200,000 a full brute force is O(m^2): check the revenue evaluated directly at the
    # price and that the neighbouring candidate prices earn no more
    rng = np.random.default_rng(7)
    m = 200_000
    X, b = rng.normal(size=(m, 2)), rng.lognormal(size=m)
    w, b0 = np.array([0.6, 0.8]), -0.5
    res = market_price(w, b0, X, b)
    u = -(X @ w + b0) / np.linalg.norm(w)
    assert res.revenue == pytest.approx(revenue(u, b, res.price), rel=1e-9)
    k = int(np.flatnonzero(res.curve_prices == res.price)[0])
    for j in (k - 1, k + 1):
        rho = res.curve_prices[j]
        assert revenue(u, b, rho) <= res.revenue * (1 + 1e-9)


def test_summary_and_plot(tmp_path):
    res = market_price(*one_feature([1.0, 2.0, 0.5, -1.0]), [2.0, 2.0, 2.0, 1.0], y=[1, 0, 1, 1])
    assert "Market price 1" in res.summary() and "accuracy" in res.summary()
    ax = res.plot()
    xs, ys = res.revenue_curve()
    assert ys.max() == 3.5 and xs[np.argmax(ys)] == 1.0
    assert ax.get_xlabel().startswith("price")


def test_summary_at_a_given_price_when_no_price_earns_revenue():
    """Everyone already accepted: the optimum is 'no market', not a price of inf."""
    res = market_outcome([1.0], 0.0, [[1.0], [2.0]], [1.0, 1.0], 1.0)
    assert math.isinf(res.optimal_price)
    assert "price inf" not in res.summary()
    assert "no price earns revenue" in res.summary()

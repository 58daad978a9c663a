"""Review 3: numbers beyond float64 and infinite per-feature prices.

An overflow (a budget per distance, a sum of budgets or distances, a score, ||w||) used to make
the market vanish or report inf/NaN without a word; it is refused naming the argument. An
infinite per-feature price is a feature that is not for sale (``MarketResult.feature_prices``
itself reports inf when no market forms)."""

import warnings

import numpy as np
import pytest
from scipy.optimize import linprog

from trustlab.errors import InputError
from trustlab.strategic import (
    FixedPriceStrategicClassifier,
    NaiveMarketClassifier,
    best_response,
    make_market_population,
    market_outcome,
    market_price,
)


@pytest.mark.parametrize(
    ("w", "X", "budgets", "argument"),
    [
        ([1.0], [[-0.5], [-2.0]], [1.5e308, 1.0], "budgets"),  # b/u overflows: no market before
        ([1.0], [[-1.0], [-2.0]], [1e308, 1e308], "budgets"),  # welfare inf before
        ([1.0], [[-1e308], [-1e308], [-1.0]], [1e308, 1e308, 1.0], "X"),  # revenue inf before
        ([2.0], [[-1e308], [-1.0]], [1.0, 1.0], "X"),  # price 0, revenue NaN before
        # ||w|| = 2.1e308 (w = [1e308, 1e308] has ||w|| = 1.4e308, which fits: review 5)
        ([1.5e308, 1.5e308], [[-1.0, -1.0], [-1.0, -2.0]], [1.0, 1.0], "w"),  # both "positive"
    ],
)
def test_an_overflow_is_refused_naming_the_argument(w, X, budgets, argument):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning on the way
        with pytest.raises(InputError, match="overflow") as info:
            market_price(w, 0.0, X, budgets)
    assert info.value.argument == argument
    assert str(info.value).startswith(f"{argument}: ")


def test_the_same_market_just_below_the_overflow_is_priced():
    res = market_price([1.0], 0.0, [[-1.0], [-2.0]], [8e307, 8e307])
    assert res.price == 4e307 and res.revenue == pytest.approx(1.2e308)
    assert res.buyers.all()


def test_a_given_price_whose_burden_overflows_is_refused_but_inf_means_no_market():
    X, budgets, y = [[-1e300], [-1.0]], [0.0, 1.0], [1, 0]
    with pytest.raises(InputError, match="overflow") as info:
        market_outcome([1.0], 0.0, X, budgets, 1e10, y=y)
    assert info.value.argument == "price"
    closed = market_outcome([1.0], 0.0, X, budgets, np.inf, y=y)
    assert closed.revenue == 0.0 and not closed.buyers.any()


def test_learners_refuse_an_overflowing_market_and_scale_huge_budgets():
    X, y, b = make_market_population(60, budget_ratio=4.0, random_state=0)
    naive = NaiveMarketClassifier().fit(X, y)
    with pytest.raises(InputError, match="overflow"):
        naive.predict(X[:3], [1e308, 1e308, 1e308])
    # the median of budgets near the float maximum overflowed to inf: every budget became 0
    fixed = FixedPriceStrategicClassifier(max_epochs=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed.fit(X, y, budgets=np.full(60, 1e308))
    assert fixed.budget_scale_ == 1e308


def test_an_infinite_feature_price_means_not_for_sale():
    w, X = [1.0, 2.0], [[0.0, 1.0], [0.0, 0.0]]
    br = best_response(w, -4.0, X, [5.0, 5.0], prices=[1.0, np.inf])
    assert br.purchases.tolist() == [[2.0, 0.0], [4.0, 0.0]]
    assert br.cost.tolist() == [2.0, 4.0] and br.buys.tolist() == [True, True]
    shut = best_response(w, -4.0, X, [5.0, 5.0], prices=[np.inf, np.inf])
    assert not shut.buys.any() and shut.n_unable_to_move == 2


def test_feature_prices_of_a_closed_market_go_back_into_best_response():
    res = market_price([1.0, -1.0], 0.0, [[-1.0, 0.0]], [0.0])
    assert res.feature_prices.tolist() == [np.inf, 0.0]
    br = best_response([1.0, -1.0], 0.0, [[-1.0, 0.0]], [0.0], res.feature_prices)
    assert br.buys.tolist() == res.buyers.tolist() and br.cost.tolist() == [np.inf]


@pytest.mark.parametrize("bad", [[np.nan, 1.0], [-np.inf, 1.0], [-1.0, 1.0]])
def test_a_nan_or_negative_feature_price_is_refused_saying_how_to_close_a_feature(bad):
    with pytest.raises(InputError, match=r"inf: not for sale") as info:
        best_response([1.0, 2.0], 0.0, [[-1.0, 0.0]], [1.0], bad)
    assert info.value.argument == "prices"


def test_best_response_matches_a_linear_program_with_features_not_for_sale():
    rng = np.random.default_rng(51)
    checked = 0
    for _ in range(150):
        d, m = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        w = rng.integers(-3, 4, size=d).astype(float)
        if not w.any():
            continue
        b0 = float(rng.integers(-4, 3))
        X = rng.integers(0, 3, size=(m, d)).astype(float)
        budgets = rng.integers(0, 6, size=m).astype(float)
        p = rng.integers(0, 4, size=d).astype(float)
        p[rng.random(d) < 0.3] = np.inf
        br = best_response(w, b0, X, budgets, p)
        offered = np.isfinite(p)
        bounds = [(0, None) if ok else (0, 0) for ok in offered]
        for i in range(m):
            gap = -(X[i] @ w + b0)
            if gap <= 0:
                assert br.cost[i] == 0 and br.predictions[i] == 1
                continue
            lp = linprog(np.where(offered, p, 0.0), A_ub=[-w], b_ub=[-gap], bounds=bounds)
            cost = np.inf if lp.status == 2 else lp.fun
            assert br.cost[i] == pytest.approx(cost)
            assert br.buys[i] == (cost <= budgets[i])
            assert (br.purchases[i][~offered] == 0).all()
            checked += 1
    assert checked > 100


def test_a_population_whose_budgets_overflow_is_refused():
    # sd of the log 1e4: exp overflowed to inf budgets (with a RuntimeWarning), which every
    # market function then refused naming 'budgets', an argument the caller never passed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="overflowed") as info:
            make_market_population(10, budget_spread=1e4, random_state=0)
    assert info.value.argument == "budget_spread"
    _, _, budgets = make_market_population(10, budget_spread=50.0, random_state=0)
    assert np.isfinite(budgets).all()


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "score"])
def test_a_price_without_budgets_is_refused_not_ignored(method):
    X, y, _ = make_market_population(60, random_state=0)
    naive = NaiveMarketClassifier().fit(X, y)
    args = (X, y) if method == "score" else (X,)
    with pytest.raises(InputError, match="budgets") as info:
        getattr(naive, method)(*args, price=0.0)  # gave the no-market rule, price unused
    assert info.value.argument == "price"
    assert naive.predict(X).shape == (60,)  # without a price: the plain rule, as before


def test_soft_price_refuses_an_overflow_instead_of_nan():
    pytest.importorskip("torch")
    from trustlab.strategic import soft_market_price

    X = [[-1.0], [-2.0]]
    with pytest.raises(InputError, match="overflow") as info:
        soft_market_price([1.0], 0.0, X, [1e308, 1e308])  # revenue overflows: gave NaN
    assert info.value.argument == "budgets"
    with pytest.raises(InputError, match="overflow"):
        soft_market_price([1.0], 0.0, X, [1e200, 1e200], softmax_scale=1e200)  # gave NaN
    with pytest.raises(InputError, match="overflow"):
        soft_market_price([1.0], 0.0, [[-1e-300], [-1.0]], [1e10, 1.0])  # b/u inf: gave inf
    hard = market_price([1.0], 0.0, X, [1e200, 1e200]).price  # 5e199: revenue 1.5e200
    assert soft_market_price([1.0], 0.0, X, [1e200, 1e200]) == pytest.approx(hard, rel=1e-3)

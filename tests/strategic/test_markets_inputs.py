"""Bad input raises InputError naming the argument; a missing torch raises ConfigError."""

import sys

import numpy as np
import pytest

from trustlab.errors import ConfigError, InputError
from trustlab.strategic import (
    MarketAwareClassifier,
    NaiveMarketClassifier,
    best_response,
    make_market_population,
    market_outcome,
    market_price,
    simulate_market,
    soft_market_price,
)

X = np.array([[1.0, 0.0], [0.0, -1.0], [-2.0, 0.5]])
W = np.array([1.0, 0.5])
B = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    ("kwargs", "argument", "expected"),
    [
        ({"w": [0.0, 0.0]}, "w", "non-zero"),
        ({"w": [1.0, np.nan]}, "w", "finite"),
        ({"w": [[1.0, 0.5]]}, "w", "1-dimensional"),
        ({"b0": np.nan}, "b0", "finite"),
        ({"b0": "a"}, "b0", "finite"),
        ({"b0": "1"}, "b0", "finite"),  # float() would read these as 1.0
        ({"b0": True}, "b0", "finite"),
        ({"X": X[:, :1]}, "X", "2 column"),
        ({"X": X[0]}, "X", "2-dimensional"),
        ({"X": np.where(X == 0, np.nan, X)}, "X", "finite"),
        ({"budgets": [1.0, -2.0, 3.0]}, "budgets", "non-negative"),
        ({"budgets": [1.0, 2.0]}, "budgets", "3 values"),
        ({"budgets": [1.0, np.inf, 3.0]}, "budgets", "finite"),
        ({"budgets": [[1.0, 2.0, 3.0]]}, "budgets", "1-dimensional"),
        ({"y": [1, 0]}, "y", "3 labels"),
        ({"y": [1, 2, 0]}, "y", "binary"),
        ({"y": [1, np.nan, 0]}, "y", "missing"),
    ],
)
def test_market_price_names_the_bad_argument(kwargs, argument, expected):
    args = {"w": W, "b0": 0.0, "X": X, "budgets": B} | kwargs
    with pytest.raises(InputError, match=expected) as info:
        market_price(args.pop("w"), args.pop("b0"), args.pop("X"), args.pop("budgets"), **args)
    assert info.value.argument == argument
    assert str(info.value).startswith(argument)


@pytest.mark.parametrize("price", [-1.0, np.nan, "cheap", "1", True, np.bool_(True)])
def test_market_outcome_rejects_a_bad_price(price):
    with pytest.raises(InputError, match="price") as info:
        market_outcome(W, 0.0, X, B, price)
    assert info.value.argument == "price"


@pytest.mark.parametrize(
    ("prices", "expected"),
    [
        ([1.0], "2 per-feature"),
        ([1.0, -1.0], "non-negative"),
        (-2.0, "non-negative number"),
        ("1", "non-negative number"),
        (True, "non-negative number"),
    ],
)
def test_best_response_rejects_bad_prices(prices, expected):
    with pytest.raises(InputError, match=expected) as info:
        best_response(W, 0.0, X, B, prices)
    assert info.value.argument == "prices"


def test_soft_price_rejects_bad_temperatures():
    with pytest.raises(InputError) as info:
        soft_market_price(W, 0.0, X, B, sort_temperature=0.0)
    assert info.value.argument == "sort_temperature"
    with pytest.raises(InputError) as info:
        soft_market_price([0.0, 0.0], 0.0, X, B)
    assert info.value.argument == "w"


def test_learners_need_budgets_two_classes_and_the_fitted_width():
    Xp, y, b = make_market_population(40, random_state=0)
    with pytest.raises(InputError) as info:
        MarketAwareClassifier(max_epochs=1).fit(Xp, y)
    assert info.value.argument == "budgets"
    with pytest.raises(InputError) as info:
        MarketAwareClassifier(max_epochs=1).fit(Xp, np.arange(40) % 3, budgets=b)
    assert info.value.argument == "y"
    with pytest.raises(InputError) as info:
        MarketAwareClassifier(max_epochs=1).fit(Xp, y, budgets=-b)
    assert info.value.argument == "budgets"
    with pytest.raises(InputError) as info:
        MarketAwareClassifier(init="zeros").fit(Xp, y, budgets=b)
    assert info.value.argument == "init"
    naive = NaiveMarketClassifier().fit(Xp, y)
    with pytest.raises(InputError) as info:
        naive.predict(Xp[:, :1], b)
    assert info.value.argument == "X"
    with pytest.raises(InputError) as info:
        naive.predict(Xp, b[:5])
    assert info.value.argument == "budgets"


def test_labels_after_fit_must_be_the_fitted_classes():
    # A label outside classes_ would count as the negative class: the market's accuracy and the
    # score would be wrong without a word (0/1 labels against a model fitted on "no"/"yes").
    Xp, y, b = make_market_population(60, random_state=3)
    words = np.where(y == 1, "yes", "no")
    naive = NaiveMarketClassifier().fit(Xp, words, budgets=b)
    for call in (lambda: naive.market(Xp, b, y), lambda: naive.score(Xp, y, budgets=b)):
        with pytest.raises(InputError, match=r"classes_=\['no', 'yes'\]") as info:
            call()
        assert info.value.argument == "y"
    # the same labels as fit saw give the accuracy of predict
    expected = np.mean(naive.predict(Xp, b) == words)
    assert naive.score(Xp, words, budgets=b) == pytest.approx(expected, abs=0)
    assert naive.market(Xp, b, words).accuracy == pytest.approx(expected, abs=1e-12)
    # a label list of another length is refused, not broadcast
    for bad in ([1], y[:-1]):
        with pytest.raises(InputError, match="60 labels") as info:
            NaiveMarketClassifier().fit(Xp, y, budgets=b).score(Xp, bad)
        assert info.value.argument == "y"


def test_simulation_and_population_arguments():
    with pytest.raises(InputError) as info:
        simulate_market("adult")
    assert info.value.argument == "data"
    with pytest.raises(InputError) as info:
        make_market_population(10, budget_ratio=0.0)
    assert info.value.argument == "budget_ratio"


def test_missing_torch_is_a_config_error(monkeypatch):
    Xp, y, b = make_market_population(40, random_state=0)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    with pytest.raises(ConfigError, match=r"trustlab\[torch\]"):
        MarketAwareClassifier(max_epochs=1).fit(Xp, y, budgets=b)
    with pytest.raises(ConfigError):
        soft_market_price(W, 0.0, X, B)
    # the exact market needs no torch
    assert market_price(W, 0.0, X, B).n_users == 3


def test_a_price_of_minus_zero_is_zero():
    """``--price=-0.0`` is the free market, reported as 0, not '-0' (price and revenue)."""
    res = market_outcome([1.0], 0.0, [[-1.0], [1.0]], [1.0, 1.0], -0.0)
    assert str(res.price) == "0.0" and str(res.revenue) == "0.0"
    assert "price 0 per" in res.summary()

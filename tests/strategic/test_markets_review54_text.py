"""Text where the market expects numbers (review pass 54): budgets, labels, weights, features
and per-feature prices given as strings ("1.5") were read as numbers, while b0 and price refuse
strings; all are now refused naming the argument."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.strategic import (
    NaiveMarketClassifier,
    best_response,
    market_outcome,
    market_price,
)

X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
W, B0, BUDGETS = [1.0, 1.0], -1.5, [1.5, 2.0, 3.0]


@pytest.mark.parametrize(
    ("call", "argument", "shown"),
    [
        (lambda: market_price(W, B0, X, ["1.5", "2", "3"]), "budgets", "'1.5' at index 0"),
        (lambda: market_price(W, B0, X, pd.Series(["1.5", 2.0, 3.0])), "budgets", "'1.5'"),
        (lambda: market_price(W, B0, X, BUDGETS, y=["1", "0", "1"]), "y", "'1' at index 0"),
        (lambda: market_price(["1", 1.0], B0, X, BUDGETS), "w", "'1' at index 0"),
        (
            lambda: market_price(
                W, B0, pd.DataFrame({"a": [1, 0, 1], "b": ["0", "1", "1"]}), BUDGETS
            ),
            "X",
            "'0' at row 0, column 1",
        ),
        (lambda: market_outcome(W, B0, X, ["1.5", "2", "3"], 1.0), "budgets", "'1.5'"),
        (lambda: best_response(W, B0, X, BUDGETS, ["1", "2"]), "prices", "'1' at index 0"),
    ],
)
def test_text_where_a_number_is_expected_is_refused(call, argument, shown):
    with pytest.raises(InputError, match=f"^{argument}: expected .*got text") as info:
        call()
    assert info.value.argument == argument
    assert shown in str(info.value)


def test_a_learners_text_budgets_are_refused():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(40, 2))
    labels = (features[:, 0] > 0).astype(int)
    with pytest.raises(InputError, match="^budgets: expected numbers, got text"):
        NaiveMarketClassifier().fit(features, labels).market(features, ["1"] * 40)


def test_numbers_in_an_object_array_are_still_read():
    as_objects = market_price(W, B0, X, np.array(BUDGETS, dtype=object), y=[True, False, True])
    assert as_objects.price == market_price(W, B0, X, BUDGETS, y=[1, 0, 1]).price

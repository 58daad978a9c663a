"""Per-feature ``w`` or ``prices`` given as a pandas Series named by a DataFrame ``X``'s columns
are matched by name, not position (a Series in another order silently paired each weight or
price with another feature); names that are not the columns are refused (review 5)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.strategic import best_response, market_outcome, market_price

X = pd.DataFrame({"income": [-1.0, -2.0, 1.0], "tenure": [0.0, 0.0, 5.0]})
BUDGETS = [1.0, 1.0, 1.0]


def test_weights_are_matched_to_the_columns_by_name():
    in_order = market_price(pd.Series({"income": 1.0, "tenure": -0.1}), 0.0, X, BUDGETS)
    shuffled = market_price(pd.Series({"tenure": -0.1, "income": 1.0}), 0.0, X, BUDGETS)
    assert in_order.price == shuffled.price and np.isfinite(shuffled.price)
    assert np.array_equal(in_order.distances, shuffled.distances)
    at = market_outcome(pd.Series({"tenure": -0.1, "income": 1.0}), 0.0, X, BUDGETS, 0.2)
    assert np.array_equal(at.buyers, market_outcome([1.0, -0.1], 0.0, X, BUDGETS, 0.2).buyers)


def test_prices_are_matched_to_the_columns_by_name():
    prices = pd.Series({"tenure": 100.0, "income": 3.0})  # income costs 3 per unit
    response = best_response([1.0, 0.0], 0.0, X, [10.0, 10.0, 10.0], prices)
    assert response.cost.tolist() == [3.0, 6.0, 0.0]
    assert np.array_equal(
        response.cost, best_response([1.0, 0.0], 0.0, X, [10.0] * 3, [3.0, 100.0]).cost
    )


def test_a_positional_series_is_read_by_position():
    response = best_response([1.0, 0.0], 0.0, X, [10.0] * 3, pd.Series([3.0, 100.0]))
    assert response.cost.tolist() == [3.0, 6.0, 0.0]


@pytest.mark.parametrize("argument", ["w", "prices"])
def test_names_that_are_not_the_columns_are_refused(argument):
    wrong = pd.Series({"inc": 1.0, "tenure": 1.0})
    with pytest.raises(InputError, match="indexed by the columns of X") as info:
        if argument == "w":
            market_price(wrong, 0.0, X, BUDGETS)
        else:
            best_response([1.0, 1.0], 0.0, X, BUDGETS, wrong)
    assert info.value.argument == argument

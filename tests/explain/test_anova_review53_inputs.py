"""ANOVA-TPNN review 53: a numeric feature held as a pandas category of numbers (a categorised
frame, a Parquet file) or an object column of numbers is taken as its numbers, as FastPD takes it;
numbers written as text are refused saying so."""

import numpy as np
import pandas as pd
import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN


@pytest.fixture(scope="module")
def fitted():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    rng = np.random.default_rng(53)
    X = pd.DataFrame({"income": rng.uniform(10, 90, 80), "rooms": rng.integers(1, 6, 80)})
    y = X["income"] / 40 + X["rooms"] + 0.1 * rng.normal(size=80)
    model = ANOVATPNN(max_epochs=2, random_state=0, n_jobs=1).fit(X, y)
    torch.set_num_threads(previous)
    return X, y, model


def test_a_numeric_feature_as_a_category_of_numbers_is_its_numbers(fitted):
    # was: "X: expected numbers in the numeric feature 'rooms', got an array of shape (80,) and
    # dtype int64" (numbers refused for not being numbers)
    X, _, model = fitted
    expected = model.predict(X)
    for frame in (
        X.astype({"rooms": "category"}),
        X.astype({"income": "category"}),
        X.astype(object),
    ):
        assert np.array_equal(model.predict(frame), expected)


def test_a_gap_in_a_category_of_numbers_is_named_as_a_gap(fitted):
    X, _, model = fitted
    rooms = X["rooms"].astype("category").where(X.index != 3)
    with pytest.raises(InputError, match=r"got NaN in feature 'rooms' \(first at row 3, 1 in all"):
        model.predict(X.assign(rooms=rooms))


def test_fitting_a_category_of_numbers_as_numeric_equals_fitting_the_numbers(fitted):
    X, y, model = fitted
    torch.set_num_threads(1)
    again = ANOVATPNN(max_epochs=2, random_state=0, n_jobs=1, categorical_features=[])
    again.fit(X.astype({"rooms": "category"}), y)
    assert np.array_equal(again.predict(X), model.predict(X))


def test_numbers_written_as_text_are_refused_saying_so(fitted):
    X, _, model = fitted
    for frame in (X.astype({"rooms": str}), X.astype({"rooms": str}).astype({"rooms": "category"})):
        with pytest.raises(InputError) as info:
            model.predict(frame)
        message = str(info.value)
        assert message.startswith(
            "X: expected numbers in the numeric feature 'rooms', got numbers written as text (e.g. "
        )
        assert "array of shape" not in message
        assert message.endswith("convert the column to numbers (pandas.to_numeric)")

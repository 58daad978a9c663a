"""ANOVATPNN.summarize knows the fit's rows by their values, not only by their number (54r)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN


@pytest.fixture(scope="module")
def halves():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 2)), columns=["a", "b"])
    y = (X["a"] + X["b"] > 0).astype(int).to_numpy()
    model = ANOVATPNN(max_epochs=2, random_state=0).fit(X.iloc[:200], y[:200])
    return model, X, y


def test_other_rows_as_many_as_the_fits_are_all_scored(halves):
    model, X, y = halves
    assert len(model.validation_rows_) > 0
    # a 50/50 split's test half: 200 rows like the fit's, none of them trained on
    test = model.summarize(X.iloc[200:], y[200:], n_points=5, top=0)
    assert test.to_dict()["training_score_rows"] == 200
    assert test.training_score == model.score(X.iloc[200:], y[200:])
    assert "rows it trained on" not in test.summary()
    assert test.held_out_rows is None
    # the fit's rows, under another index: the held-out rows are left out as before
    fit = model.summarize(X.iloc[:200].reset_index(drop=True), y[:200], n_points=5, top=0)
    assert fit.to_dict()["training_score_rows"] == 200 - len(model.validation_rows_)


def test_y_of_another_length_is_an_input_error(halves):
    model, X, y = halves
    with pytest.raises(InputError, match=r"^y: expected one value per row of X \(200\)"):
        model.summarize(X.iloc[:200], y[:199], n_points=5, top=0)

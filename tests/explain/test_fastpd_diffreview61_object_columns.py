"""Diff review 61 I of 39d12826: the text-column refusal must refuse text only.

39d12826 refused every frame column whose dtype was not numeric, so an object column of numbers
and a column of numeric strings (both read as numbers by scikit-learn and, before, by FastPD) were
refused, and dates / durations lost their own message ('numbers, not dates or durations').
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


def _explainer():
    rng = np.random.default_rng(61)
    X = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, X["a"] + 2 * X["b"])
    return FastPD(model).fit(X), X.iloc[:4]


@pytest.mark.parametrize("dtype", [object, str, "string"])
def test_columns_of_numbers_read_as_numbers(dtype):
    explainer, rows = _explainer()
    other = rows.astype({"b": dtype})
    np.testing.assert_array_equal(explainer.shap_values(other), explainer.shap_values(rows))


def test_text_and_dates_are_refused_with_their_own_messages():
    explainer, rows = _explainer()
    with pytest.raises(InputError, match=r"numeric feature columns, got 1 that are not: 'b'"):
        explainer.shap_values(rows.assign(b=["x", "1", "2", "3"]))
    with pytest.raises(InputError, match=r"^X_eval: expected numbers, not dates or durations"):
        explainer.shap_values(rows.assign(b=pd.to_datetime([1, 2, 3, 4], unit="D")))

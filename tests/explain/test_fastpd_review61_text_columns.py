"""Review 61: a data frame with a text column is refused naming the column.

FastPD.fit and the row methods answered "background: expected numeric array-like, got DataFrame"
followed by the frame's printed text, which does not say which column is the problem (the CLI
already names it). A category column of numbers still reads as its numbers.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(frame, frame["a"])
    return frame, FastPD(model).fit(frame)


def _with_text(frame):
    bad = frame.astype({"b": object})
    bad.loc[2, "b"] = "oops"
    return bad


def test_text_column_named_in_fit_and_rows(fitted):
    frame, explainer = fitted
    expected = r"expected numeric feature columns, got 1 that are not: 'b' \(object\)$"
    with pytest.raises(InputError, match="background: " + expected[:-1]):
        FastPD(explainer.model).fit(_with_text(frame))
    with pytest.raises(InputError, match="X_eval: " + expected[:-1]):
        explainer.shap_values(_with_text(frame))
    with pytest.raises(InputError) as caught:
        explainer.pd_function(_with_text(frame), ["a"])
    assert "oops" not in str(caught.value) and "DataFrame" not in str(caught.value)


def test_category_of_numbers_reads_as_numbers(fitted):
    frame, explainer = fitted
    as_category = frame.assign(c=pd.Categorical(frame["c"]))
    np.testing.assert_array_equal(
        explainer.shap_values(as_category.iloc[:5]), explainer.shap_values(frame.iloc[:5])
    )

"""context_scores(categories=...) that is no sequence is refused naming categories (diff review
63 B of 2c8aff8a).

2c8aff8a refused one text; a number still raised Python's "TypeError: 'int' object is not
iterable" and a mapping was read as its keys (one category per key). Lists, tuples, numpy
arrays and pandas Series / Categorical of the categories score as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.safety.context import context_scores

PREDICTIONS, RATES = ["safe", "unsafe", "safe"], [0.9, 0.1, 0.9]


@pytest.mark.parametrize("categories", [5, 3.0, {"a": 1, "b": 2}])
def test_a_number_or_mapping_as_categories_is_refused(categories):
    with pytest.raises(InputError, match=r"^categories: expected a 1-dimensional array") as info:
        context_scores(PREDICTIONS, RATES, "binary", categories=categories, n_bootstrap=0)
    assert info.value.argument == "categories"


@pytest.mark.parametrize("kind", [list, tuple, np.array, pd.Series, pd.Categorical])
def test_sequences_of_categories_score_as_a_list(kind):
    categories = ["child-related crimes", "other", "other"]
    expected = context_scores(PREDICTIONS, RATES, "binary", categories=categories, n_bootstrap=0)
    result = context_scores(
        PREDICTIONS, RATES, "binary", categories=kind(categories), n_bootstrap=0
    )
    assert result.headline() == expected.headline()
    assert result.accuracy == pytest.approx(2 / 3)  # item 0 forced unsafe, judged safe

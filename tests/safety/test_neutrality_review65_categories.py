"""paired_symmetry's categories (review 65): a value that is no sequence is an InputError naming
categories (it was a raw TypeError), and a missing category is refused instead of forming a
group of its own ("None", "nan")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import paired_symmetry

TWO = ([0.9, 0.2], [0.7, 0.1], [0.1, 0.8], [0.2, 0.6])


@pytest.mark.parametrize("categories", [3, 0.5, {"a": 1, "b": 2}])
def test_categories_that_are_no_sequence_are_named(categories):
    with pytest.raises(InputError, match=r"^categories: expected a sequence with one category"):
        paired_symmetry(*TWO, categories=categories, n_bootstrap=0)


@pytest.mark.parametrize("missing", [None, math.nan, np.float32("nan"), "", "  "])
def test_a_missing_category_is_refused_not_a_group(missing):
    with pytest.raises(
        InputError, match=r"^categories: expected a category for every pair \(item 1\)"
    ):
        paired_symmetry(*TWO, categories=["health", missing], n_bootstrap=0)


def test_named_categories_are_kept():
    result = paired_symmetry(*TWO, categories=np.array(["health", "economy"]), n_bootstrap=0)
    assert [row["category"] for row in result.by_category] == ["health", "economy"]
    assert [row["refusal_rate"] for row in result.by_category] == [1.0, 0.0]

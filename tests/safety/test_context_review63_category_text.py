"""context_scores(categories=<one text>) is refused (review 63).

Before, a text was read letter by letter: 20 items with categories="child-related crimes" (20
letters) scored accuracy 1.0 over 13 one-letter categories, where the category's forced-unsafe
rule gives 0.0 for the judge that calls every item safe.
"""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.context import context_scores


def test_one_text_as_categories_is_refused():
    category = "child-related crimes"
    with pytest.raises(InputError, match=r"^categories: expected a sequence with one category"):
        context_scores(["safe"] * 20, [0.9] * 20, "binary", categories=category, n_bootstrap=0)
    scores = context_scores(
        ["safe"] * 20, [0.9] * 20, "binary", categories=[category] * 20, n_bootstrap=0
    )
    assert scores.accuracy == 0.0

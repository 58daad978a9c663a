"""Parsing at the score bound and first tokens after a newline or tab (review 65 mutation check).

Two mutants of judging.py passed every context test: the score kept in [1, 10) (a 10, "completely
safe", became a parse failure) and leading white space stripped as spaces only (a "\\nsafe" or
"\\tunsafe" first token, which the docstring counts, was ignored).
"""

from __future__ import annotations

import math

import pytest

from trustlab.safety.context import parse_judgement, safe_probability


@pytest.mark.parametrize(
    ("text", "score"), [('{"judgement": 10}', 10.0), ('{"judgement": "1"}', 1.0)]
)
def test_scores_at_the_bounds_are_kept(text, score):
    assert parse_judgement(text, "score") == score


def test_newline_and_tab_before_a_spelling():
    top = {"\nsafe": math.log(0.3), "\tUnsafe": math.log(0.1), " safe": math.log(0.2)}
    assert safe_probability(top) == pytest.approx(5 / 6, rel=1e-12)

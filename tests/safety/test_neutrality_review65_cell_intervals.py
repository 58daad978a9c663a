"""Intervals of sub-tables are their own (review 65, tests that could not fail): the by-category
intervals of paired_symmetry replaced by the overall ones, and the yes-rate intervals of
technique_scores drawn over all the cell's responses instead of those that answered the
question, both passed every neutrality test. Oracles are closed-form: a category where every
pair refuses (none refuses) has the interval [1, 1] ([0, 0]); a yes-rate of 2 of 4 answers has
the support {0, 1/4, ..., 1} and, with P(0) = P(4) = 1/16 > 2.5%, the 95% interval [0, 1]."""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import paired_symmetry, technique_scores


def test_by_category_intervals_are_the_categorys():
    refusal = [0.9] * 10 + [0.1] * 10
    low = [0.2] * 20
    result = paired_symmetry(
        refusal, refusal, low, low, categories=["x"] * 10 + ["y"] * 10, n_bootstrap=200
    )
    lo, hi = result.intervals["refusal_rate"]
    assert 0.0 < lo < 0.5 < hi < 1.0  # the overall rate is 0.5
    rows = {row["category"]: row["intervals"]["refusal_rate"] for row in result.by_category}
    assert rows == {"x": [1.0, 1.0], "y": [0.0, 0.0]}


@pytest.mark.parametrize("random_state", [0, 1])
def test_a_yes_rate_interval_is_over_the_answers_given(random_state):
    n = 40
    answers = [{"A": True}, {"A": False}, {"A": True}, {"A": False}] + [None] * (n - 4)
    scores = technique_scores(
        ["refusal"] * n,
        ["unsafe_questions"] * n,
        answers=answers,
        n_bootstrap=2000,
        random_state=random_state,
    )
    row = next(r for r in scores.yes_rates if r["task"] == "all" and r["question"] == "A")
    assert (row["n_answered"], row["yes"], row["rate"]) == (4, 2, 0.5)
    assert (row["low"], row["high"]) == (0.0, 1.0)

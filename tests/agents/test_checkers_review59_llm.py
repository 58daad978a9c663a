"""Review 59: the llm checker does not read NaN log-probabilities as a certain "no".

A model scoring " Yes" or " No" as NaN (broken weights, float16 overflow) gave P(yes) = 0, hard
evidence that the predicate is false, without a word; both answers at -inf gave 0 as well
(where an answer with neither word gives ``undecided``).
"""

from __future__ import annotations

import math

import pytest

from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.policy import Action
from trustlab.errors import BackendError

CTX = CheckContext(history=(), action=Action(name="pay"), task_intent="Pay the rent.")


class _Scores:
    name = "scores"

    def __init__(self, yes: float, no: float):
        self.values = [yes, no]

    def logprobs(self, prompts, continuations, chat=True):
        return self.values


def _checker(yes, no, **options):
    return make_checker({"type": "llm", "question": "ok?", "model": _Scores(yes, no), **options})


@pytest.mark.parametrize(("yes", "no"), [(math.nan, -1.0), (-1.0, math.nan)])
def test_nan_log_probabilities_are_an_error(yes, no):
    with pytest.raises(BackendError, match="log-probabilities"):
        _checker(yes, no)(CTX)


def test_neither_answer_possible_is_undecided():
    assert _checker(-math.inf, -math.inf)(CTX) == 0.5
    assert _checker(-math.inf, -math.inf, undecided=0.3)(CTX) == 0.3


def test_finite_and_one_sided_scores_are_unchanged():
    assert _checker(-1.0, -2.0)(CTX) == pytest.approx(1 / (1 + math.exp(-1.0)), abs=1e-15)
    assert _checker(-math.inf, -1.0)(CTX) == 0.0
    assert _checker(-1.0, -math.inf)(CTX) == 1.0

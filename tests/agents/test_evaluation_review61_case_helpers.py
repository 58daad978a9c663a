"""Review 61: the case helpers the evaluation and the weight learner share are public names of
trustlab.agents.evaluation (the learner imported _as_cases and _check_case, private to it)."""

from __future__ import annotations

import inspect

import pytest

from trustlab.agents import evaluation, learning
from trustlab.agents.evaluation import as_cases, check_case
from trustlab.errors import InputError


def test_the_shared_case_helpers_are_public():
    assert {"as_cases", "check_case"} <= set(evaluation.__all__)
    assert "evaluation import _" not in inspect.getsource(learning)
    assert as_cases(iter([{"a": 1}])) == [{"a": 1}]
    with pytest.raises(InputError, match="cases: expected a sequence of cases"):
        as_cases({"trajectory": [], "action": "pay"})
    with pytest.raises(InputError, match="cases\\[3\\]"):
        check_case({"action": "pay", "label": "safe"}, 3)

"""Review 59: a value recorded on a history step for a predicate the policy does not declare is
refused, as evidence for one is.

A misspelt recorded value ('askd' for 'asked') was ignored and the checker decided instead: the
payment after the user was asked was blocked (p_safe 0.269, where the recorded value gives 0.5).
"""

from __future__ import annotations

import pytest

from trustlab.agents import Guardrail
from trustlab.errors import InputError

POLICY = {
    "actions": {"pay": {"soft_rule_ids": ["ask_first"]}},
    "rule_list": [
        {
            "rule_id": "ask_first",
            "predicates": [["pay", "", "", "action"], ["asked", "", "", "condition"]],
            "logic": "(NOT pay) UNTIL asked OR ALWAYS NOT pay",
        }
    ],
    "checkers": {"asked": {"type": "ask_the_user", "mode": "message"}},
}


def _history(name):
    return {"task_intent": "x", "steps": [{"action": "read", "predicates": {name: True}}]}


def test_a_recorded_value_counts():
    assert Guardrail(POLICY).check(_history("asked"), "pay").p_safe == 0.5


@pytest.mark.parametrize("method", ["check", "features"])
def test_a_misspelt_recorded_predicate_is_refused(method):
    guard = Guardrail(POLICY)
    with pytest.raises(
        InputError,
        match=r"^trajectory.steps\[0\].predicates: expected predicates the policy declares "
        r"\['asked', 'pay'\], got \['askd'\]",
    ):
        getattr(guard, method)(_history("askd"), "pay")

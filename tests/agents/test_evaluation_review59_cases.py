"""Review 59: evaluate_guardrail and fit_rule_weights take cases from an iterator and refuse one
case alone, a string or None in one message.

An iterator (a generator of cases) and None raised len()'s TypeError; one case given alone was
iterated by its keys and refused as "cases[0].trajectory: expected the trajectory ..., got none",
naming a trajectory the case has.
"""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, evaluate_guardrail, fit_rule_weights
from trustlab.errors import InputError

POLICY = one_rule_policy()
CASES = [
    {"trajectory": [], "action": "pay", "label": "safe", "oracle": {"ok": True}},
    {"trajectory": [], "action": "pay", "label": "unsafe", "oracle": {"ok": False}},
]


def test_an_iterator_of_cases_is_read():
    guard = Guardrail(POLICY)
    result = evaluate_guardrail(guard, iter(CASES), mode="oracle", random_state=0)
    assert result.n_cases == 2 and result.metrics["accuracy"]["estimate"] == 1.0
    fit = fit_rule_weights(guard, (c for c in CASES))
    assert fit.weights == fit_rule_weights(guard, CASES).weights


@pytest.mark.parametrize("cases", [CASES[0], "abc", None, 3])
def test_not_a_sequence_of_cases_is_refused(cases):
    guard = Guardrail(POLICY)
    expected = r"^cases: expected a sequence of cases \(mappings or GuardCase objects\)"
    with pytest.raises(InputError, match=expected):
        evaluate_guardrail(guard, cases, mode="oracle")
    with pytest.raises(InputError, match=expected):
        fit_rule_weights(guard, cases)

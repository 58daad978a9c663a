"""Review pass 2: weight learning on cases whose action no policy action covers."""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, fit_rule_weights
from trustlab.errors import InputError

POLICY = one_rule_policy()
CASES = [
    {"trajectory": [], "action": "pay", "label": "unsafe", "oracle": {"ok": False}},
    {"trajectory": [], "action": "pay", "label": "safe", "oracle": {"ok": True}},
    {"trajectory": [], "action": "read", "label": "unsafe"},
    {"trajectory": [], "action": "read", "label": "unsafe"},
]


def _decided_right(guard, fit, cases):
    learned = guard.with_weights(fit.weights)
    right = [
        learned.check(c["trajectory"], c["action"], evidence=c.get("oracle")).action_allowed
        == (c["label"] == "safe")
        for c in cases
    ]
    return sum(right) / len(right)


@pytest.mark.parametrize("unknown", ["block", "allow"])
def test_training_accuracy_decides_uncovered_actions_as_the_guardrail_does(unknown):
    """An uncovered action has no features (score 0) and counted as allowed: with
    unknown_action "block" the accuracy read 0.5 where the guardrail decides all four right."""
    guard = Guardrail({**POLICY, "unknown_action": unknown})
    fit = fit_rule_weights(guard, CASES)
    assert fit.accuracy == pytest.approx(_decided_right(guard, fit, CASES))


def test_an_uncovered_action_under_unknown_action_error_is_refused_naming_the_case():
    """check() refuses such a case; the fit took it silently as an allowed step."""
    with pytest.raises(InputError, match=r"cases\[2\]\.action.*'read'"):
        fit_rule_weights(Guardrail(POLICY), CASES)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"trajectory": [], "action": "pay", "label": "unsafe"}, r"cases\[1\]: evidence"),
        (
            {"trajectory": {"task_intent": 3}, "action": "pay", "label": "safe", "oracle": {}},
            r"cases\[1\]: trajectory\.task_intent",
        ),
    ],
)
def test_a_bad_case_is_named_by_its_index(bad, message):
    """The error named a missing predicate or a bad trajectory but not which of the cases."""
    with pytest.raises(InputError, match=message):
        fit_rule_weights(Guardrail(POLICY), [CASES[0], bad])

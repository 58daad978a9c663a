"""The weight learner words an unmatched action's refusal with the guardrail's shared helper
``not_instantiated`` (it called the private method ``Guardrail._not_instantiated``)."""

from __future__ import annotations

import inspect

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, fit_rule_weights, learning
from trustlab.agents.guardrail import not_instantiated
from trustlab.agents.policy import as_action, load_policy
from trustlab.errors import InputError

POLICY = load_policy(one_rule_policy())


def test_not_instantiated_names_the_evidence_or_the_checker():
    said_no = not_instantiated(POLICY, as_action("pay"), {"pay": 0.2})
    assert said_no.startswith("evidence['pay'] = 0.2 says it is not a 'pay' action")
    assert not_instantiated(POLICY, as_action("pay"), {}).startswith("its checker for 'pay'")
    assert not_instantiated(POLICY, as_action("refund"), {}) == ""


def test_the_learner_uses_no_private_guardrail_method():
    assert "._not_instantiated" not in inspect.getsource(learning)
    case = {"trajectory": [], "action": "pay", "evidence": {"pay": False, "ok": True}, "label": 1}
    with pytest.raises(InputError, match=r"cases\[0\]\.action: .* but evidence\['pay'\] = False"):
        fit_rule_weights(Guardrail(one_rule_policy()), [case])

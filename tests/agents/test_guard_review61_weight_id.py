"""Guardrail.weight refuses a rule id the policy does not have (it returned the default 1.0)."""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.errors import InputError


@pytest.mark.parametrize("rule_id", ["no_such_rule", "R", 3, None])
def test_weight_of_an_unknown_rule_id_is_refused(rule_id):
    guard = Guardrail(one_rule_policy(weights={"r": 2.0}), default_weight=0.5)
    with pytest.raises(InputError, match=r"rule_id: expected a rule id of the policy \['r'\]"):
        guard.weight(rule_id)


def test_weight_of_a_known_rule_id_is_the_policy_s_or_the_default():
    assert Guardrail(one_rule_policy(weights={"r": 2.0})).weight("r") == 2.0
    assert Guardrail(one_rule_policy(), default_weight=0.5).weights == {"r": 0.5}

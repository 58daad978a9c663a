"""Review pass 2: evidence on a policy action's own predicate decides whether the candidate
instantiates that action (it was ignored: only the checker or the tool's name counted)."""

from __future__ import annotations

import math

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.errors import InputError

POLICY = one_rule_policy("send_money", "known", "known", weights={"known": 3.0})


def test_evidence_that_a_tool_sends_money_brings_the_rules_in():
    """A tool the policy does not name ("wire_transfer") that the caller says sends money is
    checked under send_money's rules, as a checker saying so would make it."""
    guard = Guardrail(POLICY, unknown_action="allow")
    d = guard.check([], "wire_transfer", evidence={"send_money": True, "known": False})
    assert d.circuits == ("send_money",)
    assert not d.action_allowed and d.violated_rule_ids == ["known"]
    with_checker = Guardrail(
        {**POLICY, "checkers": {"send_money": {"type": "action_match", "name": "wire_transfer"}}}
    )
    same = with_checker.check([], "wire_transfer", evidence={"known": False})
    assert same.p_safe == pytest.approx(d.p_safe)
    assert guard.features([], "wire_transfer", evidence={"send_money": 1, "known": False})[0] == -1


def test_evidence_that_a_call_is_no_payment_takes_it_out_of_the_circuit():
    guard = Guardrail(POLICY, unknown_action="allow")
    d = guard.check([], "send_money", evidence={"send_money": False, "known": False})
    assert d.circuits == () and d.action_allowed
    strict = Guardrail(POLICY)  # unknown_action "error": refused as an uncovered action
    with pytest.raises(InputError, match="action"):
        strict.check([], "send_money", evidence={"send_money": False, "known": False})


@pytest.mark.parametrize(
    ("logic", "kept"),
    [("pay IMPLIES ok", 0.5), ("ok IMPLIES pay", 1 / (1 + math.exp(-1.0)))],
    ids=["prohibition", "obligation"],
)
def test_a_compliant_action_scores_one_half_only_under_prohibitions(logic, kept):
    """The docs said a compliant action always scores exactly 1/2 ("never rewarded"); an
    obligation kept by acting scores sigmoid(w) (checked against the closed form)."""
    guard = Guardrail(
        {
            "actions": {"pay": {"soft_rule_ids": ["r"]}},
            "rule_list": [
                {
                    "rule_id": "r",
                    "predicates": [["pay", "", "", "action"], ["ok", "", "", "condition"]],
                    "logic": logic,
                }
            ],
        }
    )
    assert guard.check([], "pay", evidence={"ok": True}).p_safe == pytest.approx(kept)

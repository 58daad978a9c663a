"""Review pass 54: a candidate named like a policy action that its evidence or checker says is not
one. The guardrail said "expected an action the policy covers ['pay'], got 'pay'" (or, with
unknown_action allow/block, "no rule covers this action" for an action with rules): it now says
which evidence or checker ruled the action out."""

from __future__ import annotations

import json

import pytest
from one_rule_policy import one_rule_policy

from cli_helpers import one_line, run_main
from trustlab.agents import Guardrail, fit_rule_weights
from trustlab.errors import InputError

RULED_OUT = "evidence['pay'] = False says it is not a 'pay' action (below 0.5)"


def test_the_refusal_names_the_evidence_that_ruled_the_action_out():
    guard = Guardrail(one_rule_policy())
    with pytest.raises(InputError) as err:
        guard.check([], "pay", evidence={"pay": False, "ok": True})
    assert "got 'pay', but " + RULED_OUT in str(err.value)
    with pytest.raises(InputError) as err:  # another name: the plain refusal, unchanged
        guard.check([], "read", evidence={"ok": True})
    assert str(err.value).endswith("covers ['pay'], got 'read'")


@pytest.mark.parametrize("unknown", ["allow", "block"])
def test_an_allowed_or_blocked_action_says_why_it_is_not_the_policy_action(unknown):
    guard = Guardrail(one_rule_policy(unknown_action=unknown))
    decision = guard.check([], "pay", evidence={"pay": 0.2, "ok": False})
    assert decision.action_allowed is (unknown == "allow")
    assert "no rule covers" not in decision.explanation  # the rule r covers 'pay'
    assert "evidence['pay'] = 0.2 says it is not a 'pay' action" in decision.explanation
    other = guard.check([], "read")
    assert other.explanation.endswith("(no rule covers this action)")


def test_a_checker_that_rules_the_action_out_is_named():
    policy = one_rule_policy(
        unknown_action="block", checkers={"pay": {"type": "action_match", "name": "transfer"}}
    )
    decision = Guardrail(policy).check([], "pay", evidence={"ok": True})
    assert not decision.action_allowed
    assert "its checker for 'pay' says it is not a 'pay' action" in decision.explanation


def test_learning_names_the_evidence_too():
    case = {
        "trajectory": [],
        "action": "pay",
        "label": "safe",
        "oracle": {"pay": False, "ok": True},
    }
    with pytest.raises(InputError) as err:
        fit_rule_weights(Guardrail(one_rule_policy()), [case])
    assert str(err.value).startswith("cases[0].action: ")
    assert "got 'pay', but " + RULED_OUT in str(err.value)


def test_the_cli_says_it_in_one_line(capsys, tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(one_rule_policy()))
    args = ["agents", "check", "--policy", path, "--action", "pay"]
    code, _, err = run_main([*args, "--evidence", '{"pay": false, "ok": true}'], capsys)
    assert code == 2, err
    assert RULED_OUT in one_line(err)

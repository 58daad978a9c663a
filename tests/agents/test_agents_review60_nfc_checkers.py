"""Diff review 60 J of 154dd26b: checkers and conversations compare names in NFC too.

154dd26b brought Action.name to NFC, but the names a checker specification lists (action_match,
action_count and sequence_match ``name``, sensitive_data and ask_the_user ``names``,
no_secret_disclosed ``tools``) and a tool message's ``function`` stayed raw: a policy written with
a decomposed "cafe" + U+0301 everywhere, which matched before, stopped matching (a secret sent on
was not flagged, a tool's output lost its call).
"""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.agentdojo import trajectory_from_messages
from trustlab.agents.checkers import CheckContext, make_checker
from trustlab.agents.policy import Action, Step

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"  # one name, two spellings
SPELLINGS = [(s, a) for s in (COMPOSED, DECOMPOSED) for a in (COMPOSED, DECOMPOSED)]


@pytest.mark.parametrize(("spec", "act"), SPELLINGS)
def test_an_action_match_checker_matches_its_name_in_either_spelling(spec, act):
    policy = one_rule_policy(
        checkers={"pay": {"type": "action_match", "name": spec}}, unknown_action="allow"
    )
    guard = Guardrail(policy)
    assert guard.matched_actions([], act) == ["pay"]
    assert not guard.check([], act, evidence={"ok": False}).action_allowed


@pytest.mark.parametrize(("spec", "act"), SPELLINGS)
def test_name_lists_of_the_value_checkers_match_either_spelling(spec, act):
    sensitive = make_checker({"type": "sensitive_data", "values": ["X123"], "names": [spec]})
    assert sensitive(CheckContext((), Action(name=act, arguments={"body": "X123"}))) is True
    secret = make_checker(
        {
            "type": "no_secret_disclosed",
            "arguments": "body",
            "fields": ["passport"],
            "tools": [spec],
        }
    )
    read = Step(action=Action(name=act), observation="passport: X123")
    assert secret(CheckContext((read,), Action(name="send", arguments={"body": "X123"}))) is False
    asked = make_checker({"type": "ask_the_user", "names": [spec], "mode": "asked_before"})
    said = Step(action=Action(name=act, arguments={"text": "May I pay?"}))
    assert asked(CheckContext((said,), Action(name="pay"))) is True


@pytest.mark.parametrize(("call", "result"), SPELLINGS)
def test_a_tool_message_without_an_id_finds_its_call_in_either_spelling(call, result):
    messages = [
        {"role": "user", "content": "Book the cafe."},
        {"role": "assistant", "content": "", "tool_calls": [{"function": call, "args": {}}]},
        {"role": "tool", "content": "booked", "tool_call": {"function": result}},
    ]
    assert [s.observation for s in trajectory_from_messages(messages).steps] == ["booked"]

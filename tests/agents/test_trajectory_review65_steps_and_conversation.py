"""A trajectory with both ``steps`` and ``conversation`` is refused (review 65).

The conversation's steps replaced the given ones without a word: a payment already made was
lost from the history, and a pay-at-most-once rule allowed a second payment.
"""

import pytest

from trustlab.agents import Guardrail
from trustlab.agents.policy import as_trajectory
from trustlab.errors import InputError

POLICY = {
    "actions": {"pay": {"soft_rule_ids": ["once"]}},
    "rule_list": [
        {
            "rule_id": "once",
            "predicates": [["pay", "", None, "action"]],
            "logic": "ALWAYS(pay IMPLIES WEAK_NEXT ALWAYS NOT pay)",
        }
    ],
    "weights": {"once": 3.0},
}


@pytest.mark.parametrize("conversation", [[], [{"role": "user", "content": "pay bob"}]])
def test_steps_beside_a_conversation_are_refused(conversation):
    data = {"steps": [{"action": "pay"}], "conversation": conversation}
    with pytest.raises(InputError, match="'steps' or 'conversation', not both"):
        as_trajectory(data)
    with pytest.raises(InputError, match="^trajectory: "):
        Guardrail(POLICY).check(data, "pay")


def test_either_alone_reads_as_before():
    guard = Guardrail(POLICY)
    assert not guard.check({"steps": [{"action": "pay"}]}, "pay").action_allowed
    talk = {"conversation": [{"role": "agent", "messages": [{"action": "pay"}]}]}
    assert not guard.check(talk, "pay").action_allowed
    assert [s.action.name for s in as_trajectory(talk).steps] == ["pay"]


def test_both_keys_beside_a_key_that_is_no_string_are_refused_in_words():
    # diff review 65 Q: sorting the keys for the message was a raw TypeError ('<' between int
    # and str); before the refusal this mapping was an InputError naming trajectory.1
    with pytest.raises(InputError, match="^trajectory: expected 'steps' or 'conversation'"):
        as_trajectory({"steps": [{"action": "pay"}], "conversation": [], 1: 2})

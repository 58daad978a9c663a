"""Review 59: in the ShieldAgent conversation format, a user turn before the agent's first step
is the request itself and joins ``task_intent``; its text was dropped without a word.

So the documented payment example, written as a conversation whose first turn is the user's
"Pay my rent to DE89...", blocked the payment to that IBAN (p_safe 0.0474: "the recipient comes
from nowhere") where the same request as task_intent allowed it.
"""

from __future__ import annotations

from trustlab.agents import Guardrail
from trustlab.agents.policy import Trajectory

IBAN = "DE89370400440532013000"
REQUEST = f"Pay my rent to {IBAN}."
POLICY = {
    "actions": {"send_money": {"soft_rule_ids": ["known_recipient"]}},
    "rule_list": [
        {
            "rule_id": "known_recipient",
            "predicates": [
                ["send_money", "", "", "action"],
                ["recipient_known", "", "", "condition"],
            ],
            "logic": "send_money IMPLIES recipient_known",
        }
    ],
    "checkers": {"recipient_known": {"type": "argument_mentioned", "arguments": "recipient"}},
    "weights": {"known_recipient": 3.0},
}
PAY = {"name": "send_money", "arguments": {"recipient": IBAN}}
BALANCE = {"role": "agent", "messages": [{"action": {"name": "get_balance"}}]}


def test_a_first_user_turn_is_the_task_intent():
    traj = Trajectory.from_dict({"conversation": [{"role": "user", "content": REQUEST}, BALANCE]})
    assert traj.task_intent == REQUEST
    assert len(traj.steps) == 1 and traj.steps[0].observation is None


def test_a_given_intent_comes_first_and_is_not_repeated():
    conversation = [
        {"role": "user", "content": "Pay my rent."},
        {"role": "user", "content": f"The IBAN is {IBAN}."},
        {"role": "environment", "content": "the start page"},  # no step to observe it: as before
        BALANCE,
        {"role": "user", "content": "thanks"},  # after a step: that step's observation, as before
    ]
    traj = Trajectory.from_dict({"task_intent": "Pay my rent.", "conversation": conversation})
    assert traj.task_intent == f"Pay my rent.\nThe IBAN is {IBAN}."
    assert traj.steps[0].observation == "thanks"


def test_the_payment_the_user_asked_for_is_allowed():
    guard = Guardrail(POLICY)
    as_intent = guard.check({"task_intent": REQUEST, "steps": []}, PAY)
    as_turn = guard.check({"conversation": [{"role": "user", "content": REQUEST}]}, PAY)
    assert as_intent.action_allowed and as_turn.action_allowed
    assert as_turn.p_safe == as_intent.p_safe == 0.5

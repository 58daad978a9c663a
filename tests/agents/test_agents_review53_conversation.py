"""Review pass 53: the conversation format's errors name the turn and message the user wrote, and
no action message is dropped without a word."""

from __future__ import annotations

import json

import pytest
from one_rule_policy import one_rule_policy

from cli_helpers import one_line, run_main
from trustlab.agents.policy import as_trajectory
from trustlab.errors import InputError

CASES = [
    # the message's action was named 'trajectory.steps.0.action...', a step the user never wrote
    (
        [{"role": "agent", "messages": [{"thought": "x"}, {"action": 5}]}],
        r"trajectory\.conversation\[0\]\.messages\[1\]\.action: input should be a valid "
        r"dictionary or instance of Action, got 5",
    ),
    (
        [
            {"role": "user", "content": "hi"},
            {"role": "agent", "messages": [{"action": {"arguments": {}}}]},
        ],
        r"trajectory\.conversation\[1\]\.messages\[0\]\.action\.name: field required",
    ),
    (
        [{"role": "agent", "messages": [{"action": "pay"}, {"action": None}]}],
        r"trajectory\.conversation\[0\]\.messages\[1\]\.action: .*got None",
    ),
    # the actions of a turn by another role were read as observation text (or dropped when first)
    (
        [{"role": "assistant", "messages": [{"action": "pay"}]}],
        r"trajectory\.conversation\[0\]\.role: expected 'agent' for a turn with action "
        r"messages, got 'assistant'",
    ),
    (
        [{"role": 5, "messages": [{"action": "pay"}]}],
        r"trajectory\.conversation\[0\]\.role: expected a role name .*got 5",
    ),
    # a message with neither key (a typo) was dropped without a word
    (
        [{"role": "agent", "messages": [{"action": "pay"}, {"acton": "pay"}]}],
        r"trajectory\.conversation\[0\]\.messages\[1\]: expected \{'thought': \.\.\.\} or "
        r"\{'action': \.\.\.\}, got dict \{'acton': 'pay'\}",
    ),
    # a turn without a role is an agent turn: its 'content' (a user's or tool's text) was dropped
    (
        [{"role": "agent", "messages": [{"action": "pay"}]}, {"content": "it failed"}],
        r"trajectory\.conversation\[1\]: expected an agent turn's thoughts and actions under "
        r"'messages', got 'content' \(give the turn the role whose text it is",
    ),
]


@pytest.mark.parametrize(("conversation", "message"), CASES)
def test_a_malformed_conversation_names_its_turn_and_message(conversation, message):
    with pytest.raises(InputError, match=f"^{message}"):
        as_trajectory({"task_intent": "x", "conversation": conversation})


@pytest.mark.parametrize(("conversation", "message"), CASES[:1] + CASES[3:4])
def test_the_cli_says_it_in_one_line_exit_2(capsys, tmp_path, conversation, message):
    policy, history = tmp_path / "policy.json", tmp_path / "history.json"
    policy.write_text(json.dumps(one_rule_policy()))
    history.write_text(json.dumps({"task_intent": "x", "conversation": conversation}))
    args = ["agents", "check", "--policy", policy, "--trajectory", history, "--action", "pay"]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: trajectory.conversation[")


def test_other_roles_messages_without_actions_stay_observations():
    traj = as_trajectory(
        {
            "conversation": [
                {"role": "agent", "messages": [{"thought": "t"}, {"action": "pay"}]},
                {"role": "tool", "messages": [{"result": 1}, "done"]},
            ]
        }
    )
    assert [(s.action.name, s.thought, s.observation) for s in traj.steps] == [
        ("pay", "t", '{"result": 1}\ndone')
    ]

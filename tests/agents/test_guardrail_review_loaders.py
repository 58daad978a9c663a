"""Review pass 2: the AgentDojo loaders with a saved chat history and a wrong version."""

from __future__ import annotations

import json

import pytest

from trustlab.agents.agentdojo import agentdojo_cases, trajectory_from_messages
from trustlab.errors import InputError


def test_a_chat_history_saved_as_json_is_read():
    """AgentDojo's logs write tool calls as {function, args, id}: read as objects, they raised
    AttributeError: 'dict' object has no attribute 'function'."""
    saved = json.loads(
        json.dumps(
            [
                {"role": "user", "content": [{"type": "text", "content": "Pay my rent."}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"function": "get_balance", "args": {}, "id": "c1"},
                        {"function": "send_money", "args": {"amount": 5}, "id": "c2"},
                    ],
                },
                {
                    "role": "tool",
                    "content": [{"type": "text", "content": "sent"}],
                    "tool_call": {"function": "send_money", "args": {"amount": 5}, "id": "c2"},
                    "error": None,
                },
                {
                    "role": "tool",
                    "content": [{"type": "text", "content": "1000"}],
                    "tool_call": {"function": "get_balance", "args": {}, "id": "c1"},
                    "error": None,
                },
            ]
        )
    )
    traj = trajectory_from_messages(saved)
    assert traj.task_intent == "Pay my rent."
    assert [(s.action.name, s.action.arguments, s.observation) for s in traj.steps] == [
        ("get_balance", {}, "1000"),
        ("send_money", {"amount": 5}, "sent"),
    ]


def test_an_unknown_benchmark_version_is_named_not_the_suite():
    pytest.importorskip("agentdojo")
    with pytest.raises(InputError, match="version: .*got 'v9'"):
        agentdojo_cases("banking", version="v9")

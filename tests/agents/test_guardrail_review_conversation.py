"""Review pass 2: trajectories in ShieldAgent's conversation format with odd turns."""

from __future__ import annotations

import pytest

from trustlab.agents.policy import as_trajectory
from trustlab.errors import InputError


@pytest.mark.parametrize("role", ["agent", "user"])
def test_messages_that_are_not_a_list_are_refused_by_name(role):
    # iterating them raised TypeError: 'int' object is not iterable (a traceback, or a 500)
    with pytest.raises(InputError, match=r"conversation\[0\]\.messages: expected a list"):
        as_trajectory({"task_intent": "x", "conversation": [{"role": role, "messages": 5}]})


def test_a_tool_turn_with_json_content_and_no_messages_is_its_observation():
    # content {"balance": 5} was refused as 'steps.0.observation' (a step the user never wrote);
    # messages null raised TypeError
    traj = as_trajectory(
        {
            "task_intent": "x",
            "conversation": [
                {"role": "agent", "messages": [{"action": "get_balance"}]},
                {"role": "tool", "content": {"balance": 5}, "messages": None},
            ],
        }
    )
    assert [s.observation for s in traj.steps] == ['{"balance": 5}']

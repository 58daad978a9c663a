"""Review 65: monitor_sequences on a task set in which tasks share a benign part (one problem,
several flagged steps, as the paper's 100 problems x 3 vulnerabilities): a negative window holds
neither the task's own benign request nor one text twice."""

from types import SimpleNamespace

import pytest

from trustlab.errors import InputError
from trustlab.safety.misuse import monitor_sequences


def _tasks(problems: int, variants: int) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(
            id=f"p{p}/v{v}",
            objective=f"Write program {p} with flaw {v}.",
            benign_part=f"Write program {p}.",
            flagged_part=f"Add flaw {v} to {{previous}}",
        )
        for p in range(problems)
        for v in range(variants)
    ]


def test_negatives_never_hold_the_tasks_own_benign_part():
    tasks = _tasks(3, 3)
    own = {task.id: task.benign_part for task in tasks}
    windows = monitor_sequences(tasks, n_benign=3, random_state=0)
    negatives = [w for w in windows if w["label"] == 0]
    assert len(negatives) == 27  # 12 held the task's own benign part, 7 a repeat, before
    for window in negatives:
        assert own[window["task_id"]] not in window["requests"]
        assert len(set(window["requests"])) == len(window["requests"])


def test_too_few_other_benign_parts_is_an_input_error():
    with pytest.raises(InputError, match="at least 2 benign parts other than"):
        monitor_sequences(_tasks(2, 3))  # one other problem for windows of 2 requests

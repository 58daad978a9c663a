"""Review 62 (misuse): arguments that had no effect were not checked. ``load_suite`` (and so
``trustlab eval run misuse -T random_state=x`` without ``-T n``) took any random_state when it
drew no sample, and ran all 164 tasks; ``check_success`` took any timeout for a text task."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.misuse import check_success, load_suite


@pytest.mark.parametrize("seed", ["x", -1, 1.5])
def test_load_suite_checks_random_state_without_n(seed):
    with pytest.raises(InputError, match="random_state"):
        load_suite("text", random_state=seed)
    assert len(load_suite("text", random_state=None)) == 12  # None and ints stay fine


@pytest.mark.parametrize("timeout", ["abc", -1, 0])
def test_check_success_checks_timeout_for_text_tasks(timeout):
    task = load_suite("text").tasks[0]
    with pytest.raises(InputError, match="timeout"):
        check_success(task, "- a fact", timeout=timeout)

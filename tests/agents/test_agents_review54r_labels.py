"""Trajectory labels of one kind from numpy and from Python are one label (review 54r)."""

from __future__ import annotations

import numpy as np
import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, evaluate_guardrail
from trustlab.errors import InputError


def _case(**extra):
    return {"action": "pay", "oracle": {"ok": True}, "label": "safe", "trajectory": [], **extra}


@pytest.mark.parametrize(("first", "second"), [(0, np.int64(0)), ("a", np.str_("a"))])
def test_a_numpy_label_and_the_same_python_label_are_one_trajectory(first, second):
    # cases put together from a JSON file and a numpy array: the same label, not a mistake
    guard = Guardrail(one_rule_policy())
    cases = [_case(cluster=first), _case(cluster=second)]
    result = evaluate_guardrail(guard, cases, mode="oracle", random_state=0)
    assert [r["trajectory"] for r in result.records] == [str(first)] * 2


def test_text_and_a_number_written_alike_are_still_refused():
    guard = Guardrail(one_rule_policy())
    cases = [_case(cluster=np.int64(0)), _case(cluster="0")]
    with pytest.raises(InputError, match=r"cases\[1\]\.cluster: expected trajectory labels"):
        evaluate_guardrail(guard, cases, mode="oracle", random_state=0)

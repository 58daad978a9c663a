"""Review 59: Guardrail takes numpy numbers for epsilon and default_weight, and checks method
when it is built.

np.float32(0.2) as epsilon was refused as "expected a number in (-1, 1), got
0.20000000298023224" and np.int64(2) as default_weight as "expected a finite number, got 2"
(only Python's int/float and their subclasses passed); method="fast" was accepted and failed at
the first check.
"""

from __future__ import annotations

import numpy as np
import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.errors import InputError

POLICY = one_rule_policy()


def test_numpy_numbers_are_taken():
    guard = Guardrail(POLICY, epsilon=np.float32(0.25), default_weight=np.int64(2))
    assert guard.epsilon == 0.25 and guard.default_weight == 2.0
    decision = guard.check([], "pay", evidence={"ok": False})
    assert decision.threshold == 0.625
    assert decision.p_safe == pytest.approx(1 / (1 + np.exp(2.0)), abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 1.0}, r"^epsilon: expected a number in \(-1, 1\)"),
        ({"epsilon": True}, r"^epsilon: expected a number, got True"),
        ({"default_weight": np.float32(2e4)}, r"^default_weight: expected a number in \[-10000"),
        ({"default_weight": "1"}, r"^default_weight: expected a number, got '1'"),
        ({"method": "fast"}, r"^method: expected one of 'auto'"),
    ],
)
def test_bad_values_are_refused_when_built(kwargs, message):
    with pytest.raises(InputError, match=message):
        Guardrail(POLICY, **kwargs)

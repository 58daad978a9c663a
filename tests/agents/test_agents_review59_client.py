"""Review 59: GuardClient checks its timeout and sends numpy numbers as Guardrail.check takes
them.

timeout=0 failed every check as "unreachable: Operation now in progress", NaN and -1 with a raw
ValueError, inf with an OverflowError; evidence {"ok": np.float32(0.25)} (p_safe 0.3447 in the
library) or an argument np.int64(5) raised json's TypeError, as did a set (the library names
evidence['ok']).
"""

from __future__ import annotations

import numpy as np
import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import GuardClient, make_guard_server
from trustlab.errors import InputError

POLICY = one_rule_policy()


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5"])
def test_a_bad_timeout_is_refused(timeout):
    with pytest.raises(InputError, match=r"^timeout: expected a finite number of seconds > 0"):
        GuardClient("http://127.0.0.1:1", timeout=timeout)


def test_numpy_values_are_sent_and_others_refused():
    guard = Guardrail(POLICY)
    with make_guard_server(guard, port=0) as server:
        client = GuardClient(server.url, timeout=10)
        evidence = {"ok": np.float32(0.25)}
        answer = client.check(
            [], {"name": "pay", "arguments": {"n": np.int64(5)}}, evidence=evidence
        )
        assert answer["p_safe"] == guard.check([], "pay", evidence=evidence).p_safe
        assert client.check([], "pay", evidence={"ok": np.bool_(False)})["action_allowed"] is False
        with pytest.raises(InputError, match=r"^evidence: expected values JSON can hold"):
            client.check([], "pay", evidence={"ok": {1, 2}})

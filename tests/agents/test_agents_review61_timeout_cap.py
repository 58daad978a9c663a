"""The guard server's and client's timeout is at most 1e9 s (diff review 61 D, as RemoteModel's):
a socket's timeout ends near 9.2e9 s, so GuardClient(timeout=1e10).check raised a raw
OverflowError ('timestamp out of range for platform time_t'), and a server with that timeout
dropped every connection in its handler thread."""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import GuardClient, make_guard_server
from trustlab.errors import InputError

PAST = r"^timeout: expected a finite number of seconds > 0 \(at most 1e\+09\), got"


@pytest.mark.parametrize("timeout", [1e10, 1e300])
def test_a_timeout_past_the_socket_limit_is_refused(timeout):
    with pytest.raises(InputError, match=PAST):
        GuardClient("http://127.0.0.1:1", timeout=timeout)
    with pytest.raises(InputError, match=PAST):
        make_guard_server(Guardrail(one_rule_policy()), port=0, timeout=timeout)


def test_the_limit_itself_serves_a_check():
    with make_guard_server(Guardrail(one_rule_policy()), port=0, timeout=1e9) as server:
        decision = GuardClient(server.url, timeout=1e9).check([], "pay", evidence={"ok": True})
    assert decision["action_allowed"] is True

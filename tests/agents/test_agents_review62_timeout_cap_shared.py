"""Review 62: the 1e9 s timeout cap has one source, trustlab._checks.MAX_TIMEOUT_S. The guard
server wrote its own _MAX_TIMEOUT_S = 1e9 beside trustlab.llm.remote.MAX_TIMEOUT_S (two copies
of one limit, a socket's, that could drift apart)."""

from __future__ import annotations

import pytest

import trustlab._checks
import trustlab.agents.server as guard_server
import trustlab.llm.remote as remote
from trustlab.errors import InputError


def test_the_guard_server_and_the_remote_client_share_one_cap(monkeypatch):
    assert not hasattr(guard_server, "_MAX_TIMEOUT_S")
    assert guard_server.MAX_TIMEOUT_S is trustlab._checks.MAX_TIMEOUT_S
    assert remote.MAX_TIMEOUT_S is trustlab._checks.MAX_TIMEOUT_S == 1e9
    monkeypatch.setattr(guard_server, "MAX_TIMEOUT_S", 10.0)  # the check reads the shared name
    with pytest.raises(InputError, match=r"\(at most 10\), got 11"):
        guard_server._check_timeout(11)

"""Review pass 53: the guard server closes connections that send nothing (read timeout)."""

from __future__ import annotations

import socket

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import GuardClient, make_guard_server
from trustlab.errors import InputError


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes ``sock`` (recv reads the end), False when it stays open."""
    sock.settimeout(20)  # far beyond the server's timeout below: an open socket never ends
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # connects and says nothing
        b"POST /check HTTP/1.1\r\nHost: x\r\n",  # half the headers
        b'POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"act',  # half a body
    ],
)
def test_a_silent_or_stalled_client_is_disconnected_and_others_are_served(sent):
    # without a socket timeout each such connection held its server thread forever
    with make_guard_server(Guardrail(one_rule_policy()), port=0, timeout=0.5) as server:
        with socket.create_connection((server.host, server.port)) as stalled:
            stalled.sendall(sent)
            decision = GuardClient(server.url).check([], "pay", evidence={"ok": True})
            assert decision["action_allowed"] is True
            assert _closed_by_server(stalled)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan"), True, "30"])
def test_a_bad_timeout_is_refused_by_name(timeout):
    with pytest.raises(InputError, match=r"^timeout: expected a finite number of seconds > 0"):
        make_guard_server(Guardrail(one_rule_policy()), port=0, timeout=timeout)

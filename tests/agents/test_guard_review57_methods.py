"""Review 57: the guard server answered a method it has no route for (PUT, DELETE, PATCH ...)
with the stdlib's 501 HTML page; it is now 405 with an Allow header and a JSON error, like its
other refusals, and a malformed request line gets JSON too."""

from __future__ import annotations

import json
import socket

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import make_guard_server


@pytest.fixture(scope="module")
def server():
    with make_guard_server(Guardrail(one_rule_policy()), port=0) as served:
        yield served


def _exchange(server, request: bytes) -> tuple[str, str]:
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):  # the server closes the connection after a refusal
            chunks.append(chunk)
    head, _, body = b"".join(chunks).decode("utf-8").partition("\r\n\r\n")
    return head, body


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_a_method_without_a_route_is_405_with_allow_and_a_json_error(server, method):
    body = b'{"action": "pay"}'
    request = f"{method} /check HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    head, text = _exchange(server, request.encode() + body)
    assert head.startswith("HTTP/1.1 405")
    assert "\r\nAllow: GET, POST" in head and "application/json" in head
    assert json.loads(text) == {
        "error": f"method: expected GET (/health, /policy) or POST (/check), got {method!r}"
    }


def test_head_gets_the_405_without_a_body_and_a_bad_request_line_gets_json(server):
    head, text = _exchange(server, b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith("HTTP/1.1 405") and text == ""
    # no version was read: the answer is HTTP/0.9 style, the body alone (as the stdlib's)
    head, text = _exchange(server, b"GET /health HTTP/9.9\r\n\r\n")
    assert json.loads(head) == {"error": "Invalid HTTP version (9.9)"} and text == ""

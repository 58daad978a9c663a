"""Review pass 2: the guard server with odd requests (deep JSON, oversized and chunked bodies)."""

from __future__ import annotations

import json
import socket

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.server import MAX_BODY_BYTES, make_guard_server

POLICY = one_rule_policy()


@pytest.fixture(scope="module")
def server():
    with make_guard_server(Guardrail(POLICY), port=0) as served:
        yield served


def _exchange(server, request: bytes) -> str:
    """Send ``request`` and read until the server closes the connection."""
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        try:
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:  # closed with the rest of our body unread
            pass
    return b"".join(chunks).decode("utf-8", "replace")


def _post(body: bytes, close: bool = True) -> bytes:
    head = f"POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    return (head + ("Connection: close\r\n" if close else "") + "\r\n").encode() + body


def test_json_nested_too_deep_answers_400(server):
    # json.loads raised RecursionError: a traceback on the server, the connection dropped
    answer = _exchange(server, _post(b"[" * 100_000 + b"]" * 100_000))
    assert answer.startswith("HTTP/1.1 400")
    assert "nested too deep" in answer


def test_an_oversized_body_is_answered_once_and_the_connection_closed(server):
    # the unread body was parsed as the next request on the keep-alive connection (a second,
    # garbage answer: 414 Request-URI Too Long)
    head = f"POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
    answer = _exchange(server, head.encode() + b"x" * 70_000)
    assert answer.startswith("HTTP/1.1 413")
    assert answer.count("HTTP/1.1") == 1
    assert "Connection: close" in answer


def test_a_chunked_body_is_refused_by_name(server):
    # read as an empty body ("expected a JSON object") and the chunks parsed as a next request
    body = json.dumps({"action": "pay", "evidence": {"ok": True}}).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    head = b"POST /check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = _exchange(server, head + chunked)
    assert answer.startswith("HTTP/1.1 411")
    assert answer.count("HTTP/1.1") == 1
    assert "expected a Content-Length" in answer


def test_a_normal_request_still_gets_its_decision(server):
    body = json.dumps({"action": "pay", "evidence": {"ok": False}}).encode()
    answer = _exchange(server, _post(body))
    assert answer.startswith("HTTP/1.1 200")
    assert json.loads(answer.split("\r\n\r\n", 1)[1])["action_allowed"] is False

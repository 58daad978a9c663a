"""The server's handling of request bodies it cannot read: the connection is closed after the
error answer, so the unread body is never parsed as a next request."""

from __future__ import annotations

import json
import socket

import pytest

from trustlab.llm import make_server
from trustlab.llm._http import Handler


class Echo:
    name = "echo"

    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, **kwargs):
        return list(prompts)


@pytest.fixture
def server():
    with make_server(Echo()) as srv:
        yield srv


def exchange(server, request: bytes) -> bytes:
    """Send ``request``; everything the server sends until it closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):  # a connection left open ends in socket.timeout
            reply += chunk
    return reply


def test_a_chunked_body_gets_one_411_and_the_connection_closes(server):
    body = b'{"model": "echo", "prompt": "hi", "max_tokens": 1}'
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    )
    reply = exchange(server, request)
    # before: the chunked body was read as the next request: a second, HTML "400 Bad request
    # syntax ('32')" answer followed the 411 on the same connection
    assert reply.count(b"HTTP/1.1 ") == 1, reply
    head, _, payload = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == b"411"
    assert json.loads(payload)["error"]["message"] == "a Content-Length header is required"


def test_a_body_shorter_than_its_content_length_is_a_client_error(server, monkeypatch):
    monkeypatch.setattr(Handler, "timeout", 0.5)  # the idle read timeout, 60 s by default
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n" + b'{"prompt": "x"}'
    )
    reply = exchange(server, request)
    assert reply.count(b"HTTP/1.1 ") == 1, reply
    head, _, payload = reply.partition(b"\r\n\r\n")
    # before: 500 server_error "TimeoutError: timed out"
    assert head.split()[1] == b"408", reply
    error = json.loads(payload)["error"]
    assert error["type"] == "invalid_request_error"
    assert "Content-Length" in error["message"]


def test_a_connection_stays_open_for_the_next_request_after_a_body_is_read(server):
    body = b'{"model": "echo", "prompt": "hi", "max_tokens": 1}'
    one = (
        b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    last = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    reply = exchange(server, one + one + last)
    assert reply.count(b"HTTP/1.1 200 ") == 3, reply

"""Review pass 53: the errors http.server answers by itself are OpenAI-style JSON too."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from trustlab.llm import make_server


class Echo:
    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0,
                 batch_size=8, random_state=None):  # fmt: skip
        return [p[::-1] for p in prompts]


@pytest.fixture(scope="module")
def server():
    with make_server(Echo(), model_name="echo") as srv:
        yield srv


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS"])
def test_an_unsupported_method_is_a_json_error(server, method):
    answer = httpx.request(method, f"{server.url}/v1/models", timeout=10)
    assert answer.status_code == 501
    assert answer.headers["Content-Type"] == "application/json"
    error = answer.json()["error"]
    assert error["message"] == f"Unsupported method ('{method}')"
    assert error["type"] == "invalid_request_error"


def test_too_many_headers_is_a_json_error_and_closes(server):
    headers = b"".join(b"X-%d: 1\r\n" % i for i in range(200))
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(b"GET /v1/models HTTP/1.1\r\n" + headers + b"\r\n")
        raw = b""
        while chunk := conn.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ")
    assert b"Connection: close" in head and b"Content-Type: application/json" in head
    assert json.loads(body)["error"]["message"].startswith("Too many headers")


def test_head_gets_no_body(server):
    answer = httpx.head(f"{server.url}/v1/models", timeout=10)
    assert answer.status_code == 501 and answer.content == b""

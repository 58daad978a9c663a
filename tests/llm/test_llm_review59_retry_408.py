"""Review pass 59: a 408 Request Timeout is retried like a 429 or a 5xx.

A server answers 408 when it gave up waiting for the request (``trustlab llm serve`` does so for a
body that stalls, see ``tests/llm/test_llm_http_body.py``); RFC 9110 lets the client repeat it and
the official ``openai`` client retries it. ``RemoteModel`` raised ``BackendError ... HTTP 408
... (not retried)`` at the first one. Other 4xx answers are still not retried.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest

from trustlab.errors import BackendError
from trustlab.llm import RemoteModel
from trustlab.llm import remote as remote_module


class _FirstFails(BaseHTTPRequestHandler):
    """Answers the first ``failures`` requests with ``status``, then one chat completion."""

    protocol_version = "HTTP/1.1"
    status = 408
    failures = 1
    seen = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).seen += 1
        if type(self).seen <= self.failures:
            code, body = self.status, {"error": {"message": "request timed out"}}
        else:
            code, body = 200, {"choices": [{"message": {"content": "hello"}}]}
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def waits(monkeypatch):
    recorded: list[float] = []
    monkeypatch.setattr(remote_module, "_sleep", recorded.append)
    return recorded


def _served(serve_handler, status, failures):
    _FirstFails.status, _FirstFails.failures, _FirstFails.seen = status, failures, 0
    return f"http://127.0.0.1:{serve_handler(_FirstFails).server_address[1]}"


def test_a_408_is_retried_and_the_retry_answers(serve_handler, waits):
    url = _served(serve_handler, 408, failures=2)
    with RemoteModel(url, "m", max_retries=2, backoff=0.5) as model:
        assert model.chat("hi") == "hello"
    assert _FirstFails.seen == 3
    assert len(waits) == 2 and 0.5 <= waits[0] <= 0.625 and 1.0 <= waits[1] <= 1.25


def test_a_408_that_persists_gives_up_after_the_retries(serve_handler, waits):
    url = _served(serve_handler, 408, failures=10)
    with RemoteModel(url, "m", max_retries=1) as model:
        with pytest.raises(
            BackendError, match=r"gave up after 2 attempt\(s\); last error: HTTP 408"
        ):
            model.chat("hi")
    assert _FirstFails.seen == 2


@pytest.mark.parametrize("status", [400, 404, 409])
def test_other_client_errors_are_still_not_retried(serve_handler, waits, status):
    url = _served(serve_handler, status, failures=1)
    with RemoteModel(url, "m", max_retries=3) as model:
        with pytest.raises(BackendError, match=rf"HTTP {status}: .*\(not retried\)"):
            model.chat("hi")
    assert _FirstFails.seen == 1 and waits == []

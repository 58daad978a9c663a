"""Review pass 57: a base URL that urllib cannot parse is an InputError, and credentials in a base
URL (``http://user:key@host/v1``, sent as Basic auth) are never shown: not in ``base_url``, the
repr, a BackendError or the InputError of a refused URL."""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler

import pytest

from trustlab.errors import BackendError, InputError
from trustlab.llm import RemoteModel

SECRET = "sk-URLSECRET"


def test_an_unclosed_ipv6_bracket_is_an_input_error():
    # before: ValueError 'Invalid IPv6 URL' (the CLI: "unexpected failure", exit 1)
    with pytest.raises(InputError, match=r"^base_url: expected an http\(s\) URL"):
        RemoteModel("http://[::1", "m")


class _Failing(BaseHTTPRequestHandler):
    """Answers every request 500 naming the key it got, and keeps its Authorization header."""

    protocol_version = "HTTP/1.1"
    seen: list[str | None] = []

    def do_POST(self):
        self.seen.append(self.headers.get("Authorization"))
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        body = json.dumps({"error": {"message": f"boom; bad key {key}"}}).encode()
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def failing(serve_handler):
    _Failing.seen = []
    return serve_handler(_Failing)


def test_credentials_in_the_base_url_are_sent_but_never_shown(failing):
    port = failing.server_address[1]
    with RemoteModel(f"http://user:{SECRET}@127.0.0.1:{port}", "m", max_retries=0) as model:
        assert model.base_url == f"http://127.0.0.1:{port}/v1"
        assert SECRET not in repr(model)
        with pytest.raises(BackendError, match="HTTP 500") as exc:
            model.chat("x")
    assert SECRET not in str(exc.value)
    assert f"POST http://127.0.0.1:{port}/v1/chat/completions" in str(exc.value)
    assert _Failing.seen == ["Basic " + base64.b64encode(f"user:{SECRET}".encode()).decode()]


def test_a_refused_base_url_hides_its_credentials():
    with pytest.raises(InputError, match="valid port") as exc:
        RemoteModel(f"http://user:{SECRET}@host:99999/v1", "m")
    assert SECRET not in str(exc.value) and "//***@host:99999" in str(exc.value)


def test_an_api_key_the_server_echoes_is_hidden_in_the_error(failing):
    # before: 'HTTP 500: {"error": {"message": "boom; bad key sk-URLSECRET"}}'
    url = f"http://127.0.0.1:{failing.server_address[1]}"
    with RemoteModel(url, "m", api_key=SECRET, max_retries=0) as model:
        with pytest.raises(BackendError, match="HTTP 500") as exc:
            model.chat("x")
    assert _Failing.seen == [f"Bearer {SECRET}"]
    assert SECRET not in str(exc.value) and "bad key ***" in str(exc.value)

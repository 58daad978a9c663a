"""Review 62: every error that quotes a server's words hides the API key and the URL's password.
Only HTTP error answers and connection failures did (``RemoteModel._hidden``); a server (or a
proxy) that echoed the key it got showed it in full in eight other errors: a stream that broke
mid-way, a 2xx body that is not JSON, a stream "error" event, a malformed stream chunk, a
non-stream reply to a stream, a reply with no text, malformed logprobs and a malformed model list.
Diff review A: a server echoing the request's Authorization header showed the URL's password
base64-encoded ('Basic YWxpY2U6aHVudGVyMg==' is 'alice:hunter2').
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from trustlab.errors import BackendError
from trustlab.llm import RemoteModel
from trustlab.llm.remote import _SNIPPET_CHARS

KEY = "sk-Echoed0123456789"
PASSWORD = 'pw"\\é'  # JSON escapes all three: the error quotes json.dumps of the answer


def _secret(headers) -> str:
    """The key of a Bearer header, the password of a Basic one (as the client sent it)."""
    kind, _, value = headers["Authorization"].partition(" ")
    if kind == "Basic":
        return base64.b64decode(value).decode().partition(":")[2]
    return value


class _Echo(BaseHTTPRequestHandler):
    """Answers 200 with a reply that quotes the credentials; the path's last part picks it."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, body: bytes, kind: str = "application/json", chunked: bool = False):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        if chunked:  # one good chunk, then a chunk header that is the secret
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body) + _secret(self.headers).encode())
            self.wfile.write(b"\r\n")
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(json.dumps({"echo": _secret(self.headers)}).encode())

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        secret = _secret(self.headers)
        mode = self.path.split("/")[2]
        quoted = json.dumps(f"bad key {secret}")
        if mode == "broke":
            self._send(b'data: {"choices": [{"delta": {"content": "x"}}]}\n\n', chunked=True)
        elif mode == "notjson":
            self._send(f"<html>bad key {secret}</html>".encode())
        elif mode == "event":
            self._send(
                f'data: {{"error": {{"message": {quoted}}}}}\n\n'.encode(), "text/event-stream"
            )
        elif mode == "chunk":
            self._send(f'data: {{"choices": {quoted}}}\n\n'.encode(), "text/event-stream")
        elif mode == "nostream":
            self._send(f"refused {secret}\n".encode(), "text/plain")
        elif mode == "notext":
            self._send(json.dumps({"choices": [{"msg": secret}]}).encode())
        elif mode == "logprobs":
            choice = {"message": {"content": "a"}, "logprobs": {"content": secret}}
            self._send(json.dumps({"choices": [choice]}).encode())
        elif mode == "header":  # the request's Authorization header as it came
            self._send(f"<html>Authorization: {self.headers['Authorization']}</html>".encode())
        elif mode == "long":  # the key across the 300-character cut of the quoted answer
            self._send(("x" * (_SNIPPET_CHARS - 8) + secret + "y" * 50).encode())


CALLS = {
    "broke": ("the stream broke", lambda m: list(m.stream("hi"))),
    "notjson": ("not JSON", lambda m: m.chat("hi")),
    "event": ("the stream failed", lambda m: list(m.stream("hi"))),
    "chunk": ("malformed stream chunk", lambda m: list(m.stream("hi"))),
    "nostream": ("no event stream", lambda m: list(m.stream("hi"))),
    "notext": ("no choices", lambda m: m.chat("hi")),
    "logprobs": ("malformed logprobs", lambda m: m.completions("hi")),
    "long": ("not JSON", lambda m: m.chat("hi")),
    "models": ("no data", lambda m: m.models()),
}


@pytest.fixture(scope="module")
def port():
    """One echoing server for the module (a server per test cost 0.5 s each to shut down)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("mode", list(CALLS))
def test_an_error_quoting_the_api_key_hides_it(port, mode):
    reason, call = CALLS[mode]
    with RemoteModel(f"http://127.0.0.1:{port}/v1/{mode}", "m", KEY, max_retries=0) as model:
        with pytest.raises(BackendError, match=reason) as exc:
            call(model)
    message = str(exc.value)
    assert "***" in message
    assert "Echoed" not in message and "0123456789"[:6] not in message


@pytest.mark.parametrize("mode", ["event", "notext", "models"])
def test_an_error_quoting_the_url_password_hides_it_also_json_escaped(port, mode):
    reason, call = CALLS[mode]
    url = f"http://user:pw%22%5C%C3%A9@127.0.0.1:{port}/v1/{mode}"
    with RemoteModel(url, "m", max_retries=0) as model:
        with pytest.raises(BackendError, match=reason) as exc:
            call(model)
    message = str(exc.value)
    assert "***" in message and "pw" not in message


def test_an_echoed_basic_header_is_hidden(port):
    password = "hunter2"
    url = f"http://alice:{password}@127.0.0.1:{port}/v1/header"
    with RemoteModel(url, "m", max_retries=0) as model:
        with pytest.raises(BackendError, match="not JSON") as exc:
            model.chat("hi")
    message = str(exc.value)
    assert message.endswith("Authorization: Basic ***</html>")
    assert base64.b64encode(f"alice:{password}".encode()).decode() not in message

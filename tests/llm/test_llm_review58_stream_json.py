"""Review 58: a server that answers a streaming request with one plain JSON body (it ignores
``stream: true``) is named as such, not as a stream that ended without [DONE]."""

import json
from http.server import BaseHTTPRequestHandler

import pytest

from trustlab.errors import BackendError
from trustlab.llm import RemoteModel


class _PlainJson(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        reply = {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def plain_json(serve_handler):
    return serve_handler(_PlainJson)


def test_a_plain_json_reply_to_a_stream_says_the_server_does_not_stream(plain_json):
    with RemoteModel(f"http://127.0.0.1:{plain_json.server_address[1]}", "m") as model:
        with pytest.raises(BackendError) as exc:
            list(model.stream("hi", 8))
    message = str(exc.value)
    assert "no event stream (application/json" in message
    assert "the server does not stream; use chat() or complete()" in message
    assert '"content": "hello"' in message  # what it answered

"""Review 62 (diff review A of 6588e98e): a server that echoes the request's Authorization
header showed the URL's password base64-encoded ('Basic YWxpY2U6aHVudGVyMg==' is
'alice:hunter2'); only the plain and the JSON-escaped forms were hidden."""

from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from trustlab.errors import BackendError
from trustlab.llm import RemoteModel


class _EchoHeader(BaseHTTPRequestHandler):
    """Answers 200 with a page (not JSON) quoting the Authorization header it got."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = f"<html>Authorization: {self.headers['Authorization']}</html>".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHeader)
    server.block_on_close = False
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_an_echoed_basic_header_is_hidden(port):
    password = "hunter2"
    url = f"http://alice:{password}@127.0.0.1:{port}/v1"
    with RemoteModel(url, "m", max_retries=0) as model:
        with pytest.raises(BackendError, match="not JSON") as exc:
            model.chat("hi")
    message = str(exc.value)
    assert message.endswith("Authorization: Basic ***</html>")
    assert base64.b64encode(f"alice:{password}".encode()).decode() not in message

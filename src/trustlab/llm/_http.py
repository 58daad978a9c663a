"""The HTTP side of the OpenAI-compatible server: routes, JSON answers, event streams, hang-ups.

One :class:`Handler` thread serves each connection of an :class:`~trustlab.llm.server.LLMServer`
(``app`` below). A completion request is checked (``trustlab.llm._openai``), handed to the app's
backend (``trustlab.llm._serving``) as a ticket, and answered from the ticket's steps: as one JSON
object, or, with ``stream: true``, as server-sent events (``data: {chunk}`` lines, then
``data: [DONE]``) in a chunked HTTP/1.1 body, each chunk sent as soon as its tokens exist.

A client that hangs up is noticed while its handler waits (the socket reads as closed) or when a
write fails mid-stream; its ticket is then cancelled, so its rows leave the batch at the next token
and the other requests go on.
"""

from __future__ import annotations

import json
import logging
import queue
import select
import socket
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from trustlab.errors import InputError
from trustlab.llm._decoding import Step
from trustlab.llm._openai import Reply, RequestError, models_list, parse_chat, parse_completion
from trustlab.llm._serving import ShuttingDown, Ticket

if TYPE_CHECKING:
    from trustlab.llm.server import Faults, LLMServer

log = logging.getLogger("trustlab.llm.server")

MAX_BODY_BYTES = 16 * 2**20
# how often a handler waiting for the model checks whether its client is still there
_POLL_S = 0.1
_ROUTES = {
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/completions": "completion",
    "/completions": "completion",
}


def _unauthorised() -> RequestError:
    return RequestError(401, "missing or wrong API key (Authorization: Bearer)", "invalid_api_key")


def _failure(exc: BaseException) -> RequestError:
    """A model failure (500, logged) or the server stopping (503) as an error answer."""
    if isinstance(exc, ShuttingDown):
        return RequestError(503, str(exc), "server_error")
    log.error("request failed", exc_info=exc)
    return RequestError(500, f"{type(exc).__name__}: {exc}", "server_error")


def _fault_kind(status: int) -> str:
    """The OpenAI error type of an injected status: a client error below 500 (429: rate limit)."""
    if status == 429:
        return "rate_limit_exceeded"
    return "invalid_request_error" if status < 500 else "server_error"


def _error_body(exc: RequestError) -> dict[str, Any]:
    return {"message": str(exc), "type": exc.kind, "param": exc.param, "code": None}


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # the listen backlog: many clients connect at once under load

    def __init__(self, address: tuple[str, int], app: LLMServer):
        self.app = app
        super().__init__(address, Handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so pooled clients reuse connections
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    server_version = "trustlab-llm"
    timeout = 60  # an idle keep-alive connection closes after this many seconds
    server: HTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.app._stats_lock:
            self.server.app._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.app._stats_lock:
            self.server.app._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The errors http.server answers by itself (a method other than GET and POST, a
        malformed request line, too many headers) in the OpenAI-style JSON of every other error
        (the base class sends an HTML page); the connection closes, as there."""
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        error = RequestError(code, reason, "invalid_request_error")
        if getattr(self, "command", None) == "HEAD":  # a HEAD answer has no body
            self.send_response(code)
            self.send_header("Connection", "close")
            self.end_headers()
            return
        self._send_error(error, {"Connection": "close"})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base signature)
        log.info("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        app = self.server.app
        app._enter()
        try:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/health":  # a load balancer's check carries no key; it says only "ok"
                self._send_json(200, {"status": "ok"})
            elif not app._authorised(self.headers.get("Authorization")):
                self._send_error(_unauthorised())
            elif path in ("/v1/models", "/models"):
                self._send_json(200, models_list(app.model_name))
            elif path.removeprefix("/v1").startswith("/models/"):  # the client's models.retrieve
                model = urllib.parse.unquote(path.removeprefix("/v1").removeprefix("/models/"))
                if model == app.model_name:
                    self._send_json(200, models_list(app.model_name)["data"][0])
                else:
                    error = f"model {model!r} not found; this server serves {app.model_name!r}"
                    self._send_error(RequestError(404, error, "model_not_found"))
            else:
                self._send_error(RequestError(404, f"no such endpoint: GET {path}", "not_found"))
        finally:
            app._leave()

    def do_POST(self) -> None:
        app = self.server.app
        app._enter()
        try:
            self._post(app)
        finally:
            app._leave()

    def _post(self, app: LLMServer) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            # read whole first (keep-alive), then judged as the API does: key, endpoint, body
            raw = self._read_body()
            if not app._authorised(self.headers.get("Authorization")):
                raise _unauthorised()
            fault = app._next_fault()
            if fault is not None and self._inject(app, fault):
                return
            if path not in _ROUTES:
                raise RequestError(404, f"no such endpoint: POST {path}", "not_found")
            body = _json_object(raw)
            if _ROUTES[path] == "chat":
                tokenizer = getattr(app.model, "tokenizer", None)
                request = parse_chat(body, app.model_name, tokenizer)
            else:
                request = parse_completion(body, app.model_name)
            ticket = app._backend.submit(request)
        except RequestError as exc:
            self._send_error(exc)
            return
        except InputError as exc:  # a request field (or a model argument) the input rules refuse
            self._send_error(RequestError(400, str(exc), param=exc.argument))
            return
        except Exception as exc:  # a model failure: a 500 with the reason, the server lives on
            self._send_error(_failure(exc))
            return
        reply = Reply(request, app.model_name)
        if request.stream:
            self._stream(ticket, reply)
        else:
            self._answer(ticket, reply)

    def _answer(self, ticket: Ticket, reply: Reply) -> None:
        """Wait for every choice, then send the whole response."""
        steps: dict[int, list] = {i: [] for i in range(ticket.n_choices)}
        for choice, item in self._steps(ticket):
            if isinstance(item, BaseException):
                ticket.cancel()
                self._send_error(_failure(item))
                return
            steps[choice].append(item)
        if ticket.cancelled:  # the client left: nobody to answer
            self.close_connection = True
            return
        self._send_json(200, reply.body(steps, ticket.prompt_tokens))

    def _stream(self, ticket: Ticket, reply: Reply) -> None:
        """Send the answer as server-sent events while it is generated, then ``[DONE]``."""
        chunked = self.request_version == "HTTP/1.1"
        steps: dict[int, list] = {i: [] for i in range(ticket.n_choices)}
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.close_connection = True
            self.end_headers()
            for chunk in reply.opening_chunks():
                self._event(chunk, chunked)
            for choice, item in self._steps(ticket):
                if isinstance(item, BaseException):
                    ticket.cancel()
                    self._event({"error": _error_body(_failure(item))}, chunked)
                    break
                steps[choice].append(item)
                for chunk in reply.step_chunks(choice, item):
                    self._event(chunk, chunked)
            else:
                if ticket.cancelled:
                    self.close_connection = True
                    return
                if reply.request.include_usage:
                    usage = reply.usage_chunk(steps, ticket.prompt_tokens)
                    if usage is not None:
                        self._event(usage, chunked)
            self._write(b"data: [DONE]\n\n", chunked)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client hung up mid-stream: stop its rows, keep the others going
            ticket.cancel()
            self.close_connection = True

    def _steps(self, ticket: Ticket) -> Iterator[tuple[int, Step | BaseException]]:
        """``(choice, Step or exception)`` until every choice finished, the first exception,
        or the client hanging up (then the ticket is cancelled)."""
        remaining = ticket.n_choices
        while remaining:
            try:
                choice, item = ticket.queue.get(timeout=_POLL_S)
            except queue.Empty:
                if self._client_gone():
                    ticket.cancel()
                    return
                continue
            yield choice, item
            if isinstance(item, BaseException):
                return
            if item.finish_reason is not None:
                remaining -= 1

    def _client_gone(self) -> bool:
        """Whether the client closed its side (readable with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _event(self, obj: Any, chunked: bool) -> None:
        self._write(b"data: " + json.dumps(obj).encode() + b"\n\n", chunked)

    def _write(self, data: bytes, chunked: bool) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

    def _read_body(self) -> bytes:
        # until the body is read whole, an error answer closes the connection: the unread bytes
        # would otherwise be parsed as the next request on this keep-alive connection
        keep_open, self.close_connection = not self.close_connection, True
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError(411, "a Content-Length header is required")
        try:
            size = int(length)
        except ValueError:
            size = -1
        if size < 0:  # read(-1) would wait for the client to close, read(-5) raise
            raise RequestError(400, f"bad Content-Length {length!r}")
        if size > MAX_BODY_BYTES:
            raise RequestError(413, f"request body over {MAX_BODY_BYTES} bytes")
        try:
            raw = self.rfile.read(size)
        except TimeoutError:
            raise RequestError(
                408, f"the request body did not arrive: expected {size} bytes (Content-Length)"
            ) from None
        if len(raw) < size:  # the client closed its side early
            raise RequestError(400, f"the request body is shorter than Content-Length {size}")
        self.close_connection = not keep_open
        return raw

    def _inject(self, app: LLMServer, fault: Faults) -> bool:
        """Apply a fault; True when it answered the request itself."""
        if fault.delay and app._stopping.wait(fault.delay):
            return True  # shutting down: leave the connection unanswered
        if fault.malformed is not None:
            self._send_raw(200, fault.malformed.encode())
            return True
        if fault.status is not None:
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            kind = _fault_kind(fault.status)
            error = RequestError(fault.status, f"injected fault (HTTP {fault.status})", kind)
            self._send_error(error, headers)
            return True
        return False

    def _send_error(self, exc: RequestError, headers: dict[str, str] | None = None) -> None:
        self._send_json(exc.status, {"error": _error_body(exc)}, headers)

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(obj).encode(), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away (e.g. it timed out); nothing left to tell it
            self.close_connection = True


def _json_object(raw: bytes) -> dict[str, Any]:
    """A request body decoded as a JSON object (400 otherwise)."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise RequestError(400, "request body: expected JSON") from None
    if not isinstance(body, dict):
        raise RequestError(400, "request body: expected a JSON object")
    return body

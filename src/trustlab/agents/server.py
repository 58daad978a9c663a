"""The guardrail as an HTTP endpoint, so any agent framework can ask before each tool call.

Routes (JSON in, JSON out):

- ``POST /check`` with ``{"trajectory": ..., "action": ..., "evidence": {...} (optional)}`` answers
  200 and the decision (:meth:`Decision.to_dict`: ``action_allowed``, ``p_safe``,
  ``violated_rules``, ``explanation`` ...); a malformed body or trajectory (a key given twice in
  one object included) answers 400 with ``{"error": message}`` naming what is wrong; the decision is the one
  :meth:`Guardrail.check` returns for the same input.
- ``GET /health`` answers ``{"status": "ok", "actions": [...], "rules": n}``; ``GET /policy`` the
  policy. Another path answers 404, another method (PUT, DELETE ...) 405 with ``Allow: GET,
  POST``, both with ``{"error": message}``.

Each connection is served on its own thread; checks run one at a time (the guardrail's cache of
history predicate values is shared), which keeps decisions identical to library calls. A
connection that sends nothing (or stops mid-request) for ``timeout`` seconds (default 30) is
closed, so idle or stalled clients do not hold threads forever.

>>> from trustlab.agents import Guardrail
>>> from trustlab.agents.server import GuardClient, make_guard_server
>>> guard = Guardrail({"actions": {"pay": {"soft_rule_ids": ["r"]}}, "rule_list": [{
...     "rule_id": "r", "predicates": [["pay", "", "", "action"], ["ok", "", "", "condition"]],
...     "logic": "pay IMPLIES ok"}]})
>>> server = make_guard_server(guard, port=0).start()
>>> GuardClient(server.url).check([], "pay", evidence={"ok": False})["action_allowed"]
False
>>> server.shutdown()
"""

from __future__ import annotations

import errno
import json
import logging
import socket
import threading
import urllib.error
import urllib.request
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trustlab._checks import MAX_TIMEOUT_S, RepeatedKeyError, shown_url, unique_keys
from trustlab._results import to_jsonable
from trustlab.errors import BackendError, InputError

__all__ = ["GuardServer", "make_guard_server", "serve_guardrail", "GuardClient"]

log = logging.getLogger("trustlab.agents.server")
MAX_BODY_BYTES = 4 * 2**20
#: Seconds a connection may stay silent (before or within a request) before it is closed.
READ_TIMEOUT = 30.0


def _check_timeout(timeout: Any) -> float:
    """Seconds > 0, at most MAX_TIMEOUT_S (past it a socket raised a raw OverflowError)."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise InputError.bad(
            "timeout", f"a finite number of seconds > 0 (at most {MAX_TIMEOUT_S:g})", timeout
        )
    return float(timeout)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        # the socket's timeout: without one a silent or stalled client held its thread forever
        self.timeout = self.server.guard_server.timeout
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("%s - %s", self.address_string(), format % args)

    def _answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(to_jsonable(body), ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:  # the request's body was left unread: say so to the client
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own refusals as JSON like the routes' errors, not its HTML page: a method
        with no route (PUT, DELETE, HEAD ...; the stdlib's 501) is 405 with an Allow header, a
        malformed request line or headers keep their code with the stdlib's message."""
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True  # the request was not read to its end: no next request
        headers = None
        if code == HTTPStatus.NOT_IMPLEMENTED and self.command:
            code, headers = HTTPStatus.METHOD_NOT_ALLOWED, {"Allow": "GET, POST"}
            message = (
                f"method: expected GET (/health, /policy) or POST (/check), got {self.command!r}"
            )
        self._answer(code, {"error": message or self.responses.get(code, ("error",))[0]}, headers)

    def _route(self) -> str:
        """The request's path without its query string or a trailing slash."""
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        guard = self.server.guard_server.guardrail
        path = self._route()
        if path == "/health":
            self._answer(
                200,
                {
                    "status": "ok",
                    "actions": sorted(guard.policy.actions),
                    "rules": len(guard.policy.rule_list),
                },
            )
        elif path == "/policy":
            self._answer(200, guard.policy.as_json())
        else:
            self._answer(
                404,
                {"error": f"no route {self.path!r}; use POST /check, GET /health or GET /policy"},
            )

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        owner = self.server.guard_server
        if self._route() != "/check":
            self._answer(404, {"error": f"no route {self.path!r}; use POST /check"})
            return
        if "Transfer-Encoding" in self.headers:  # a chunked body is not read: no next request
            self.close_connection = True
            got = self.headers.get("Transfer-Encoding")
            self._answer(
                411, {"error": f"body: expected a Content-Length, got Transfer-Encoding {got!r}"}
            )
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0:  # read(-1) would wait for the client to close the connection
            self.close_connection = True  # the body is left unread: no next request to parse
            got = self.headers.get("Content-Length")
            self._answer(
                400, {"error": f"Content-Length: expected a non-negative integer, got {got!r}"}
            )
            return
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is left unread, as above
            self._answer(
                413, {"error": f"body: expected at most {MAX_BODY_BYTES} bytes, got {length}"}
            )
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw.decode("utf-8") or "null", object_pairs_hook=unique_keys)
        except RepeatedKeyError as err:  # json kept the last: {"action": "pay", "action": "x"} is x
            self._answer(400, {"error": f"body: {err}"})
            return
        except ValueError as err:  # not UTF-8, not JSON, or an integer of over 4300 digits
            self._answer(400, {"error": f"body: expected a JSON object, got invalid JSON ({err})"})
            return
        except RecursionError:
            self._answer(400, {"error": "body: expected a JSON object, got JSON nested too deep"})
            return
        if not isinstance(body, dict):
            self._answer(
                400, {"error": "body: expected a JSON object {trajectory, action, evidence}"}
            )
            return
        unknown = sorted(set(body) - {"trajectory", "action", "evidence"})
        if unknown or "action" not in body:
            self._answer(
                400,
                {
                    "error": f"body: expected keys trajectory, action (required), evidence; got {sorted(body)}"
                },
            )
            return
        try:
            with owner.lock:
                owner.n_checks += 1
                decision = owner.guardrail.check(
                    body.get("trajectory"), body["action"], evidence=body.get("evidence")
                )
        except InputError as err:
            self._answer(400, {"error": str(err)})
            return
        except Exception as err:  # a checker failed: report it, keep serving
            log.error("check failed", exc_info=err)
            self._answer(500, {"error": f"{type(err).__name__}: {err}"})
            return
        self._answer(200, decision.to_dict())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    guard_server: GuardServer


class GuardServer:
    """A guardrail served over HTTP; build it with :func:`make_guard_server`.

    ``url`` is ``http://host:port``; ``n_checks`` counts the checks answered so far; a connection
    silent for ``timeout`` seconds is closed.
    """

    def __init__(self, guardrail: Any, host: str, port: int, timeout: float = READ_TIMEOUT):
        self.guardrail = guardrail
        self.timeout = timeout
        self.lock = threading.Lock()
        self.n_checks = 0
        try:
            self._httpd = _HTTPServer((host, port), _Handler)
        except OSError as err:
            if isinstance(err, socket.gaierror) or err.errno == errno.EADDRNOTAVAIL:
                # the address, not the port: it does not resolve or is not this machine's
                raise InputError.bad(
                    "host", "a name or address of this machine", f"{host} ({err.strerror})"
                ) from None
            raise InputError.bad(
                "port", f"a free port on {host}", f"{port} ({err.strerror})"
            ) from None
        self._httpd.guard_server = self
        self.host, self.port = self._httpd.server_address[:2]
        self.url = f"http://{self.host}:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> GuardServer:
        """Serve on a background thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def shutdown(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> GuardServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


def make_guard_server(
    guardrail: Any, host: str = "127.0.0.1", port: int = 8765, *, timeout: float = READ_TIMEOUT
) -> GuardServer:
    """A :class:`GuardServer` for ``guardrail`` (a Guardrail, or a policy to build one from);
    a connection that sends nothing for ``timeout`` seconds (before or within a request) is
    closed."""
    from trustlab.agents.guardrail import Guardrail

    if not isinstance(guardrail, Guardrail):
        guardrail = Guardrail(guardrail)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError.bad("port", "an integer port in [0, 65535]", port)
    if not isinstance(host, str) or not host:
        raise InputError.bad("host", "a host name or address", host)
    return GuardServer(guardrail, host, port, _check_timeout(timeout))


def serve_guardrail(
    guardrail: Any, host: str = "127.0.0.1", port: int = 8765, *, on_ready=None
) -> None:
    """Serve ``guardrail`` until Ctrl-C (blocking). ``on_ready(server)`` is called once it listens."""
    server = make_guard_server(guardrail, host, port)
    try:
        if on_ready is not None:
            on_ready(server)
        server.serve_forever()
    finally:
        server.shutdown()


class GuardClient:
    """A small client of a guard server (standard library only), for agents that call it.

    ``check`` returns the decision as a dict; a 400 answer raises InputError with the server's
    message, anything else unexpected BackendError.
    """

    def __init__(self, url: str, *, timeout: float = 30.0):
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            # a URL is shown without its credentials or query (shown_url), as RemoteModel's
            shown = shown_url(url) if isinstance(url, str) else url
            raise InputError.bad("url", "an http(s) URL of a guard server", shown)
        self.url = url.rstrip("/")
        # as make_guard_server's: 0 failed as "unreachable", NaN or -1 with a raw ValueError
        self.timeout = _check_timeout(timeout)

    def check(self, trajectory: Any, action: Any, *, evidence: Any = None) -> dict[str, Any]:
        body: dict[str, Any] = {"trajectory": _plain(trajectory), "action": _plain(action)}
        if evidence is not None:
            body["evidence"] = evidence
        parts = []
        for key, value in body.items():  # numpy numbers as Guardrail.check takes them
            try:
                parts.append(f"{json.dumps(key)}: {json.dumps(value, default=_numpy_value)}")
            except (TypeError, ValueError) as err:  # a raw TypeError before
                raise InputError.bad(key, f"values JSON can hold ({err})", value) from None
        data = ("{" + ", ".join(parts) + "}").encode("utf-8")
        request = urllib.request.Request(
            self.url + "/check",
            data=data,
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return json.loads(answer.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            message = err.read().decode("utf-8", "replace")
            try:
                message = json.loads(message)["error"]
            except (ValueError, KeyError, TypeError):
                pass
            if err.code == 400:
                raise InputError(message) from None
            raise BackendError(f"guard server answered {err.code}: {message}") from None
        except urllib.error.URLError as err:
            where = shown_url(self.url)  # no password or '?token=' in the message
            raise BackendError(f"guard server at {where} unreachable: {err.reason}") from None


def _numpy_value(value: Any) -> Any:
    """A numpy number or array as Python's (``json.dumps`` refused np.float32(0.25))."""
    if type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} {value!r:.60} is not JSON serializable")


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value

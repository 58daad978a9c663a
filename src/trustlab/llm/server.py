"""An OpenAI-compatible HTTP endpoint over a local model (standard library only).

``make_server(model)`` serves any :class:`~trustlab.llm.LanguageModel` (a
:class:`~trustlab.llm.LocalModel`, or a model name it loads) at ``GET /v1/models``,
``POST /v1/chat/completions`` and ``POST /v1/completions``, so that OpenAI clients (and
:class:`~trustlab.llm.RemoteModel`) can use it. Requests are served on threads; the model itself
runs one request at a time. This module is the HTTP side; the OpenAI schema (request fields in,
response objects out) is in ``trustlab.llm._openai``.

A :class:`Faults` object makes the server misbehave on purpose for its first requests (errors,
``Retry-After``, malformed bodies, slow answers): the tests use it to check clients against a real
server, and it helps to check a pipeline's error handling by hand.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trustlab._checks import check_non_negative, check_positive_int, check_string
from trustlab.errors import InputError, ResourceError
from trustlab.llm._inputs import check_api_key
from trustlab.llm._openai import OpenAIResponder, RequestError
from trustlab.llm.protocol import LanguageModel
from trustlab.llm.registry import load_model

__all__ = ["Faults", "LLMServer", "make_server", "serve"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 2**20


@dataclass
class Faults:
    """Misbehave on the first ``count`` POST requests (a test and diagnostic hook).

    For each of those requests the server first sleeps ``delay`` seconds, then answers ``200``
    with the raw ``malformed`` text when it is given, else the HTTP ``status`` (an OpenAI-style
    error body, with a ``Retry-After: retry_after`` header when that is given), else normally
    (a slow but correct answer when ``status`` is None). ``GET`` requests are never affected.

    Examples
    --------
    >>> Faults(count=2, status=503)  # two 503s, then normal answers
    Faults(count=2, status=503, retry_after=None, delay=0.0, malformed=None)
    >>> Faults(count=1, status=429, retry_after=2)  # rate-limited once, asks for a 2 s wait
    Faults(count=1, status=429, retry_after=2, delay=0.0, malformed=None)
    >>> Faults(count=1, status=None, delay=5.0)  # one answer that takes 5 s
    Faults(count=1, status=None, retry_after=None, delay=5.0, malformed=None)
    """

    count: int = 1
    status: int | None = 503
    retry_after: float | None = None
    delay: float = 0.0
    malformed: str | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.count, "count", minimum=0)
        if self.status is not None and (
            isinstance(self.status, bool)
            or not isinstance(self.status, int)
            or not 400 <= self.status <= 599
        ):
            raise InputError.bad(
                "status", "an HTTP error status in [400, 599] or None", self.status
            )
        if self.retry_after is not None:
            check_non_negative(self.retry_after, "retry_after")
        check_non_negative(self.delay, "delay")
        if self.malformed is not None and not isinstance(self.malformed, str):
            raise InputError.bad("malformed", "a string body or None", self.malformed)


def _unauthorised() -> RequestError:
    return RequestError(401, "missing or wrong API key (Authorization: Bearer)", "invalid_api_key")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: LLMServer):
        self.app = app
        super().__init__(address, _Handler)


class LLMServer:
    """A running (or ready to run) OpenAI-compatible server; build it with :func:`make_server`.

    Attributes
    ----------
    url : str
        ``http://host:port`` (clients add ``/v1``).
    model_name : str
        The model id the server answers to.
    n_requests : int
        Requests received so far.
    max_in_flight : int
        The largest number of requests that were being handled at the same time.
    """

    def __init__(
        self,
        model: Any,
        host: str,
        port: int,
        model_name: str,
        faults: Faults | None,
        api_key: str | None = None,
    ):
        self.model = model
        self._api_key = api_key
        self.model_name = model_name
        self.faults = faults
        self._responder = OpenAIResponder(model, model_name)
        self.n_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._n_posts = 0
        self._stats_lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._thread: threading.Thread | None = None
        try:
            self._httpd = _HTTPServer((host, port), self)
        except OSError as exc:
            raise ResourceError(f"could not listen on {host}:{port}: {exc}") from None
        self.host, self.port = host, int(self._httpd.server_address[1])
        self.url = f"http://{host}:{self.port}"

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> LLMServer:
        """Serve on a background thread; return ``self``."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                args=(0.05,),
                name=f"llm-server-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until :meth:`shutdown` (from another thread) or Ctrl-C.

        The server is shut down when this returns (Ctrl-C ends it quietly).
        """
        self._thread = threading.current_thread()
        try:
            self._httpd.serve_forever(0.05)
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop serving, cut open connections and free the port (safe to call twice)."""
        if self._stopping.is_set():
            return
        self._stopping.set()  # wakes handlers sleeping on a fault delay
        if self._thread is not None and self._thread is not threading.current_thread():
            self._httpd.shutdown()
            self._thread.join()
        with self._stats_lock:
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd.server_close()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"LLMServer(url={self.url!r}, model_name={self.model_name!r})"

    # -- bookkeeping used by the handler -----------------------------------------------------

    def _enter(self) -> None:
        with self._stats_lock:
            self.n_requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._stats_lock:
            self.in_flight -= 1

    def _authorised(self, header: str | None) -> bool:
        if self._api_key is None:
            return True
        return hmac.compare_digest((header or "").encode(), f"Bearer {self._api_key}".encode())

    def _next_fault(self) -> Faults | None:
        """The fault for this POST request, if it is among the first ``faults.count``."""
        with self._stats_lock:
            index = self._n_posts
            self._n_posts += 1
        if self.faults is not None and index < self.faults.count:
            return self.faults
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so pooled clients reuse connections
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    server_version = "trustlab-llm"
    timeout = 60  # an idle keep-alive connection closes after this many seconds
    server: _HTTPServer

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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base signature)
        log.info("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        app = self.server.app
        app._enter()
        try:
            path = self.path.split("?", 1)[0].rstrip("/")
            if not app._authorised(self.headers.get("Authorization")):
                self._send_error(_unauthorised())
            elif path in ("/v1/models", "/models"):
                self._send_json(200, app._responder.models())
            elif path == "/health":
                self._send_json(200, {"status": "ok"})
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
        responder = app._responder
        routes = {
            "/v1/chat/completions": responder.chat,
            "/chat/completions": responder.chat,
            "/v1/completions": responder.completion,
            "/completions": responder.completion,
        }
        try:
            body = self._read_json()
            if not app._authorised(self.headers.get("Authorization")):
                raise _unauthorised()
            fault = app._next_fault()
            if fault is not None and self._inject(app, fault):
                return
            if path not in routes:
                raise RequestError(404, f"no such endpoint: POST {path}", "not_found")
            self._send_json(200, routes[path](body))
        except RequestError as exc:
            self._send_error(exc)
        except InputError as exc:  # a request field (or a model argument) the input rules refuse
            self._send_error(RequestError(400, str(exc)))
        except Exception as exc:  # a model failure: a 500 with the reason, the server lives on
            log.exception("request failed")
            self._send_error(RequestError(500, f"{type(exc).__name__}: {exc}", "server_error"))

    def _read_json(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError(411, "a Content-Length header is required")
        try:
            size = int(length)
        except ValueError:
            raise RequestError(400, f"bad Content-Length {length!r}") from None
        if size > MAX_BODY_BYTES:
            raise RequestError(413, f"request body over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(size)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise RequestError(400, "request body: expected JSON") from None
        if not isinstance(body, dict):
            raise RequestError(400, "request body: expected a JSON object")
        return body

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
            kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
            error = RequestError(fault.status, f"injected fault (HTTP {fault.status})", kind)
            self._send_error(error, headers)
            return True
        return False

    def _send_error(self, exc: RequestError, headers: dict[str, str] | None = None) -> None:
        body = {"error": {"message": str(exc), "type": exc.kind, "param": None, "code": None}}
        self._send_json(exc.status, body, headers)

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


def make_server(
    model: LanguageModel | str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    model_name: str | None = None,
    faults: Faults | None = None,
    api_key: str | None = None,
) -> LLMServer:
    """An OpenAI-compatible server over ``model``, bound but not yet serving.

    Parameters
    ----------
    model : LanguageModel, str or path
        Anything with the ``LocalModel.generate(prompts, max_new_tokens, *, chat, temperature,
        random_state)`` method (a :class:`~trustlab.llm.LanguageModel`); or a model name or path,
        loaded with :func:`~trustlab.llm.load_model` once the other arguments are checked. When
        the model has a ``tokenizer`` (transformers), responses carry token ``usage`` and
        multi-message conversations use its chat template.
    host : str, default "127.0.0.1"
        The IPv4 address or host name to listen on. Keep the default unless other machines must
        reach the server (and then set ``api_key``).
    port : int, default 0
        The port; 0 picks a free one (read it from ``.url``).
    model_name : str, optional
        The model id clients must ask for; default ``model.name``, else ``"local-model"``.
    faults : Faults, optional
        Misbehave on the first requests (tests, diagnostics).
    api_key : str, optional
        When given, every request must carry ``Authorization: Bearer <api_key>`` (else 401).

    Returns
    -------
    LLMServer
        Call ``.start()`` (a background thread) or use it as a context manager, which starts it
        and shuts it down on exit; ``.serve_forever()`` serves on the calling thread.

    Notes
    -----
    Endpoints: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` and
    ``POST /v1/completions`` (also without the ``/v1`` prefix). A chat request with a single user
    message generates with ``chat=True`` (exactly ``model.generate([content], chat=True)``);
    a longer conversation is rendered with the tokenizer's chat template (or, without one, as
    ``role: content`` lines ending in ``assistant:``) and generated with ``chat=False``. Request
    fields: ``max_tokens`` (or ``max_completion_tokens``, default 256), ``temperature`` (in
    [0, 2], default 1.0 as in the OpenAI API), ``seed`` (passed on as ``random_state``) and
    ``stop`` (the text is cut at the first stop string); they are checked by the same rules as
    :class:`~trustlab.llm.RemoteModel`'s arguments. ``stream``, ``n > 1`` and ``echo`` are
    refused with a 400. Token counts in ``usage`` come from re-tokenizing the text;
    ``finish_reason`` is ``"length"`` when the answer used all of ``max_tokens``.

    Examples
    --------
    >>> class Echo:
    ...     def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0,
    ...                  batch_size=8, random_state=None):
    ...         return [p[::-1] for p in prompts]
    >>> from trustlab.llm import RemoteModel
    >>> with make_server(Echo(), model_name="echo") as server:
    ...     with RemoteModel(server.url, "echo") as client:
    ...         client.chat("hello")
    'olleh'
    """
    loads = isinstance(model, (str, os.PathLike))
    if not loads and not callable(getattr(model, "generate", None)):
        raise InputError.bad("model", "an object with a generate(prompts, ...) method", model)
    check_string(host, "host")
    _check_port(port)
    if model_name is not None:
        check_string(model_name, "model_name")
    if faults is not None and not isinstance(faults, Faults):
        raise InputError.bad("faults", "a trustlab.llm.server.Faults or None", faults)
    check_api_key(api_key)
    if loads:
        model = load_model(model)
    if model_name is None:
        model_name = getattr(model, "name", None) or "local-model"
    return LLMServer(model, host, port, model_name, faults, api_key)


def serve(
    model: LanguageModel | str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    model_name: str | None = None,
    api_key: str | None = None,
    on_ready: Callable[[LLMServer], None] | None = None,
) -> None:
    """Serve ``model`` on ``host:port`` until Ctrl-C (blocking; see :func:`make_server`).

    ``model`` is a :class:`~trustlab.llm.LanguageModel` or a model name or path (loaded after
    the other arguments are checked). ``on_ready(server)``, when given, is called once the
    server listens (read ``server.url``; ``server.shutdown()`` from another thread also ends
    the call).
    """
    server = make_server(model, host, port, model_name=model_name, api_key=api_key)
    try:
        if on_ready is not None:
            on_ready(server)
        server.serve_forever()
    finally:
        server.shutdown()


def _check_port(port: Any) -> int:
    """A TCP port number in [0, 65535] (0: any free port)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError.bad("port", "an integer port in [0, 65535]", port)
    return port

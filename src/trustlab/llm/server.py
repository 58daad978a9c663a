"""An OpenAI-compatible HTTP endpoint over a local model (standard library only).

``make_server(model)`` serves any object with the :class:`~trustlab.llm.runtime.LocalModel`
``generate`` method at ``GET /v1/models``, ``POST /v1/chat/completions`` and
``POST /v1/completions``, so that OpenAI clients (and :class:`~trustlab.llm.remote.RemoteModel`)
can use it. Requests are served on threads; the model itself runs one request at a time.

A :class:`Faults` object makes the server misbehave on purpose for its first requests (errors,
``Retry-After``, malformed bodies, slow answers): the tests use it to check clients against a real
server, and it helps to check a pipeline's error handling by hand.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trustlab._checks import check_positive_int
from trustlab.errors import InputError, ResourceError

__all__ = ["Faults", "LLMServer", "make_server", "serve"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 2**20
DEFAULT_MAX_TOKENS = 256


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
        for name in ("retry_after", "delay"):
            value = getattr(self, name)
            if value is None and name == "retry_after":
                continue
            if not _is_number(value) or value < 0 or not math.isfinite(value):
                raise InputError.bad(name, "a finite number >= 0", value)
        if self.malformed is not None and not isinstance(self.malformed, str):
            raise InputError.bad("malformed", "a string body or None", self.malformed)


class _RequestError(Exception):
    """A request the server refuses: HTTP status, OpenAI error type and message."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error"):
        super().__init__(message)
        self.status = status
        self.kind = kind


def _unauthorised() -> _RequestError:
    return _RequestError(401, "missing or wrong API key (Authorization: Bearer)", "invalid_api_key")


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
        self.n_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._n_posts = 0
        self._stats_lock = threading.Lock()
        self._model_lock = threading.Lock()  # the model runs one request at a time
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
        """Serve on the calling thread until :meth:`shutdown` (from another thread) or Ctrl-C."""
        self._thread = threading.current_thread()
        self._httpd.serve_forever(0.05)

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

    # -- the endpoints -----------------------------------------------------------------------

    def models_response(self) -> dict[str, Any]:
        entry = {"id": self.model_name, "object": "model", "created": 0, "owned_by": "trustlab"}
        return {"object": "list", "data": [entry]}

    def chat_response(self, body: dict[str, Any]) -> dict[str, Any]:
        params = self._common_params(body)
        messages = _check_messages(body.get("messages"))
        if len(messages) == 1 and messages[0]["role"] == "user":
            prompt, chat = messages[0]["content"], True
        else:
            prompt, chat = self._render_conversation(messages), False
        text = self._generate([prompt], chat, params)[0]
        text, finish, usage = self._finish(prompt, chat, text, params)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        return self._envelope("chatcmpl", "chat.completion", [choice], [usage])

    def completion_response(self, body: dict[str, Any]) -> dict[str, Any]:
        params = self._common_params(body)
        if body.get("echo"):
            raise _RequestError(400, "echo: not supported by this server")
        prompts = _check_prompts(body.get("prompt"))
        texts = self._generate(prompts, False, params)
        choices, usages = [], []
        for index, (prompt, text) in enumerate(zip(prompts, texts, strict=True)):
            text, finish, usage = self._finish(prompt, False, text, params)
            choices.append(
                {"index": index, "text": text, "finish_reason": finish, "logprobs": None}
            )
            usages.append(usage)
        return self._envelope("cmpl", "text_completion", choices, usages)

    def _common_params(self, body: dict[str, Any]) -> dict[str, Any]:
        requested = body.get("model")
        if requested is not None and requested != self.model_name:
            raise _RequestError(
                404,
                f"model {requested!r} not found; this server serves {self.model_name!r}",
                "model_not_found",
            )
        if body.get("stream"):
            raise _RequestError(400, "stream: streaming is not supported by this server")
        if body.get("n", 1) != 1:
            raise _RequestError(400, f"n: only n=1 is supported, got {body.get('n')!r}")
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise _RequestError(400, f"max_tokens: expected an integer >= 1, got {max_tokens!r}")
        temperature = body.get("temperature", 1.0)
        if not _is_number(temperature) or not 0 <= temperature <= 2:
            raise _RequestError(
                400, f"temperature: expected a number in [0, 2], got {temperature!r}"
            )
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise _RequestError(400, f"seed: expected an integer or null, got {seed!r}")
        stop = body.get("stop")
        stop = [stop] if isinstance(stop, str) else stop
        if stop is not None and (
            not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop)
        ):
            raise _RequestError(400, f"stop: expected a string or a list of strings, got {stop!r}")
        return {
            "max_tokens": max_tokens,
            "temperature": float(temperature),
            "seed": seed,
            "stop": stop or [],
        }

    def _generate(self, prompts: list[str], chat: bool, params: dict[str, Any]) -> list[str]:
        with self._model_lock:
            texts = self.model.generate(
                prompts,
                params["max_tokens"],
                chat=chat,
                temperature=params["temperature"],
                seed=params["seed"],
            )
        return [str(text) for text in texts]

    def _render_conversation(self, messages: list[dict[str, str]]) -> str:
        """A multi-message conversation as one prompt string (the model's chat template)."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if getattr(tokenizer, "chat_template", None):
            try:
                text = tokenizer.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True
                )
            except Exception as exc:  # templates raise on conversations they do not allow
                raise _RequestError(
                    400, f"messages: the model's chat template refused them: {exc}"
                ) from None
            # the plain-prompt path tokenizes with special tokens: drop a BOS the template added
            bos = getattr(tokenizer, "bos_token", None)
            if bos and text.startswith(bos) and _adds_bos(tokenizer):
                text = text[len(bos) :]
            return text
        lines = [f"{m['role']}: {m['content']}" for m in messages]
        return "\n".join([*lines, "assistant:"])

    def _finish(
        self, prompt: str, chat: bool, text: str, params: dict[str, Any]
    ) -> tuple[str, str, dict[str, int] | None]:
        """Cut ``text`` at the first stop string; the finish reason and the token usage."""
        stops = [text.find(s) for s in params["stop"] if s in text]
        if stops:
            return text[: min(stops)], "stop", self._usage(prompt, chat, text[: min(stops)])
        usage = self._usage(prompt, chat, text)
        finish = "stop"
        if usage is not None and usage["completion_tokens"] >= params["max_tokens"]:
            finish = "length"
        return text, finish, usage

    def _usage(self, prompt: str, chat: bool, text: str) -> dict[str, int] | None:
        """Token counts by re-tokenizing (None when the model exposes no tokenizer)."""
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(tokenizer):
            return None
        try:
            if chat and getattr(tokenizer, "chat_template", None):
                rendered = tokenizer.apply_chat_template(
                    [{"role": "user", "content": prompt}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
                n_prompt = len(tokenizer(rendered, add_special_tokens=False)["input_ids"])
            else:
                n_prompt = len(tokenizer(prompt)["input_ids"])
            n_text = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        except Exception:  # usage is optional in the schema; never fail a request over it
            log.debug("token counting failed", exc_info=True)
            return None
        total = n_prompt + n_text
        return {"prompt_tokens": n_prompt, "completion_tokens": n_text, "total_tokens": total}

    def _envelope(
        self, prefix: str, kind: str, choices: list[dict], usages: list[dict | None]
    ) -> dict[str, Any]:
        response = {
            "id": f"{prefix}-{uuid.uuid4().hex[:24]}",
            "object": kind,
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
        }
        if all(u is not None for u in usages):
            response["usage"] = {
                key: sum(u[key] for u in usages)
                for key in ("prompt_tokens", "completion_tokens", "total_tokens")
            }
        return response


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
                self._send_json(200, app.models_response())
            elif path == "/health":
                self._send_json(200, {"status": "ok"})
            else:
                self._send_error(_RequestError(404, f"no such endpoint: GET {path}", "not_found"))
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
        routes = {
            "/v1/chat/completions": app.chat_response,
            "/chat/completions": app.chat_response,
            "/v1/completions": app.completion_response,
            "/completions": app.completion_response,
        }
        try:
            body = self._read_json()
            if not app._authorised(self.headers.get("Authorization")):
                raise _unauthorised()
            fault = app._next_fault()
            if fault is not None and self._inject(app, fault):
                return
            if path not in routes:
                raise _RequestError(404, f"no such endpoint: POST {path}", "not_found")
            self._send_json(200, routes[path](body))
        except _RequestError as exc:
            self._send_error(exc)
        except InputError as exc:  # the model refused an argument
            self._send_error(_RequestError(400, str(exc)))
        except Exception as exc:  # a model failure: a 500 with the reason, the server lives on
            log.exception("request failed")
            self._send_error(_RequestError(500, f"{type(exc).__name__}: {exc}", "server_error"))

    def _read_json(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None:
            raise _RequestError(411, "a Content-Length header is required")
        try:
            size = int(length)
        except ValueError:
            raise _RequestError(400, f"bad Content-Length {length!r}") from None
        if size > MAX_BODY_BYTES:
            raise _RequestError(413, f"request body over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(size)
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise _RequestError(400, "request body: expected JSON") from None
        if not isinstance(body, dict):
            raise _RequestError(400, "request body: expected a JSON object")
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
            error = _RequestError(fault.status, f"injected fault (HTTP {fault.status})", kind)
            self._send_error(error, headers)
            return True
        return False

    def _send_error(self, exc: _RequestError, headers: dict[str, str] | None = None) -> None:
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
    model: Any,
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
    model : object
        Anything with the ``LocalModel.generate(prompts, max_new_tokens, *, chat, temperature,
        seed)`` method. When it has a ``tokenizer`` (transformers), responses carry token
        ``usage`` and multi-message conversations use its chat template.
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
        and shuts it down on exit.

    Notes
    -----
    Endpoints: ``GET /v1/models``, ``GET /health``, ``POST /v1/chat/completions`` and
    ``POST /v1/completions`` (also without the ``/v1`` prefix). A chat request with a single user
    message generates with ``chat=True`` (exactly ``model.generate([content], chat=True)``);
    a longer conversation is rendered with the tokenizer's chat template (or, without one, as
    ``role: content`` lines ending in ``assistant:``) and generated with ``chat=False``. Request
    fields: ``max_tokens`` (or ``max_completion_tokens``, default 256), ``temperature`` (default
    1.0, as in the OpenAI API), ``seed`` and ``stop`` (the text is cut at the first stop string).
    ``stream``, ``n > 1`` and ``echo`` are refused with a 400. Token counts in ``usage`` come
    from re-tokenizing the text; ``finish_reason`` is ``"length"`` when the answer used all of
    ``max_tokens``.

    Examples
    --------
    >>> class Echo:
    ...     def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, seed=None):
    ...         return [p[::-1] for p in prompts]
    >>> from trustlab.llm import RemoteModel
    >>> with make_server(Echo(), model_name="echo") as server:
    ...     with RemoteModel(server.url, "echo") as client:
    ...         client.chat("hello")
    'olleh'
    """
    if not callable(getattr(model, "generate", None)):
        raise InputError.bad("model", "an object with a generate(prompts, ...) method", model)
    if not isinstance(host, str) or not host:
        raise InputError.bad("host", "a host name or IPv4 address", host)
    check_port(port)
    if model_name is None:
        model_name = getattr(model, "name", None) or "local-model"
    if not isinstance(model_name, str) or not model_name:
        raise InputError.bad("model_name", "a non-empty string", model_name)
    if faults is not None and not isinstance(faults, Faults):
        raise InputError.bad("faults", "a trustlab.llm.server.Faults or None", faults)
    if api_key is not None and (not isinstance(api_key, str) or not api_key):
        raise InputError.bad("api_key", "a non-empty string or None", "<hidden>")
    return LLMServer(model, host, port, model_name, faults, api_key)


def serve(
    model: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    model_name: str | None = None,
    api_key: str | None = None,
    on_ready: Callable[[LLMServer], None] | None = None,
) -> None:
    """Serve ``model`` on ``host:port`` until Ctrl-C (blocking; see :func:`make_server`).

    ``on_ready(server)``, when given, is called once the server listens (read ``server.url``;
    ``server.shutdown()`` from another thread also ends the call).
    """
    server = make_server(model, host, port, model_name=model_name, api_key=api_key)
    try:
        if on_ready is not None:
            on_ready(server)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()


def check_port(port: Any, name: str = "port") -> int:
    """A TCP port number in [0, 65535] (0: any free port)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError.bad(name, "an integer port in [0, 65535]", port)
    return port


def _check_messages(messages: Any) -> list[dict[str, str]]:
    if not isinstance(messages, list) or not messages:
        raise _RequestError(400, "messages: expected a non-empty list of {role, content} objects")
    checked = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _RequestError(400, f"messages[{i}]: expected an object with a string role")
        checked.append({"role": message["role"], "content": _text_content(message, i)})
    return checked


def _text_content(message: dict[str, Any], i: int) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "".join(part["text"] for part in content)
    raise _RequestError(400, f"messages[{i}].content: expected a string or a list of text parts")


def _check_prompts(prompt: Any) -> list[str]:
    if isinstance(prompt, str):
        return [prompt]
    if isinstance(prompt, Sequence) and prompt and all(isinstance(p, str) for p in prompt):
        return list(prompt)
    raise _RequestError(400, "prompt: expected a string or a non-empty list of strings")


def _adds_bos(tokenizer: Any) -> bool:
    """Whether encoding a plain string prepends the BOS token."""
    try:
        ids = tokenizer("a")["input_ids"]
    except Exception:
        return False
    return bool(ids) and ids[0] == getattr(tokenizer, "bos_token_id", None)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

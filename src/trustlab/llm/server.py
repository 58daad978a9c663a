"""An OpenAI-compatible HTTP endpoint over a local model (standard library only).

``make_server(model)`` serves any :class:`~trustlab.llm.LanguageModel` (a
:class:`~trustlab.llm.LocalModel`, or a model name it loads) at ``GET /v1/models``,
``POST /v1/chat/completions`` and ``POST /v1/completions``, so that OpenAI clients (and
:class:`~trustlab.llm.RemoteModel`) can use it, with or without server-sent-event streaming.
Requests are served on threads; a local model batches the requests that arrive together into
shared forward passes (``trustlab.llm._serving``), any other model runs one request at a time.
This module holds the server's life cycle; the request handler (JSON answers, event streams,
clients that hang up) is in ``trustlab.llm._http`` and the OpenAI schema (request fields in,
response objects and stream chunks out) in ``trustlab.llm._openai``.

A :class:`Faults` object makes the server misbehave on purpose for its first requests (errors,
``Retry-After``, malformed bodies, slow answers): the tests use it to check clients against a real
server, and it helps to check a pipeline's error handling by hand.
"""

from __future__ import annotations

import hmac
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trustlab._checks import check_in_range, check_non_negative, check_positive_int, check_string
from trustlab.errors import InputError, ResourceError
from trustlab.llm._http import HTTPServer
from trustlab.llm._inputs import check_api_key
from trustlab.llm._serving import LocalBackend, SerialBackend
from trustlab.llm.local import LocalModel
from trustlab.llm.protocol import LanguageModel
from trustlab.llm.registry import load_model

__all__ = ["Faults", "LLMServer", "make_server", "serve"]

# how long shutdown() waits for the requests in flight to be answered before cutting them off
_ANSWER_GRACE_S = 2.0


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
    n_batches, largest_batch, n_abandoned : int
        Batches a local model ran so far, the most rows (choices) one of them held, and the
        rows dropped unfinished because their client hung up (all 0 for a model that is not a
        LocalModel).
    """

    def __init__(
        self,
        model: Any,
        host: str,
        port: int,
        model_name: str,
        faults: Faults | None,
        api_key: str | None = None,
        *,
        max_batch_size: int = 32,
        batch_window: float = 0.01,
    ):
        self.model = model
        self._api_key = api_key
        self.model_name = model_name
        self.faults = faults
        self._backend: LocalBackend | SerialBackend
        if isinstance(model, LocalModel):
            self._backend = LocalBackend(model, max_batch_size, batch_window)
        else:
            self._backend = SerialBackend(model)
        self.n_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._n_posts = 0
        self._stats_lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._thread: threading.Thread | None = None
        try:
            self._httpd = HTTPServer((host, port), self)
        except OSError as exc:
            self._backend.close()
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
        """Stop serving, cut open connections and free the port (safe to call twice).

        The requests waiting for the model are answered 503 (a stream: an error event) first;
        their handlers get up to 2 s for it before the connections are cut.
        """
        if self._stopping.is_set():
            return
        self._stopping.set()  # wakes handlers sleeping on a fault delay
        self._backend.close()  # answers what waits for the model with "shutting down"
        if self._thread is not None and self._thread is not threading.current_thread():
            self._httpd.shutdown()
            self._thread.join()
        # let the handlers told "shutting down" send their 503 (or a stream's error event)
        # before the connections are cut; Ctrl-C ends serve_forever on this very thread, with
        # no join above to give them that time
        deadline = time.monotonic() + _ANSWER_GRACE_S
        while time.monotonic() < deadline:
            with self._stats_lock:
                if self.in_flight == 0:
                    break
            time.sleep(0.01)
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

    @property
    def n_batches(self) -> int:
        return self._scheduler_stat("n_batches")

    @property
    def largest_batch(self) -> int:
        return self._scheduler_stat("largest_batch")

    @property
    def n_abandoned(self) -> int:
        return self._scheduler_stat("n_abandoned")

    def _scheduler_stat(self, name: str) -> int:
        scheduler = getattr(self._backend, "scheduler", None)
        return int(getattr(scheduler, name)) if scheduler is not None else 0

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
        # RFC 9110 section 11.1: the scheme is case-insensitive ("bearer" is "Bearer"), and more
        # than one space may follow it; a key that itself begins with a space (sent by
        # RemoteModel as "Bearer  <key>") is still the key
        scheme, _, token = (header or "").partition(" ")
        key = self._api_key.encode()
        exact = hmac.compare_digest(token.encode(), key)
        spaced = hmac.compare_digest(token.lstrip(" ").encode(), key)
        return scheme.lower() == "bearer" and (exact or spaced)

    def _next_fault(self) -> Faults | None:
        """The fault for this POST request, if it is among the first ``faults.count``."""
        with self._stats_lock:
            index = self._n_posts
            self._n_posts += 1
        if self.faults is not None and index < self.faults.count:
            return self.faults
        return None


def make_server(
    model: LanguageModel | str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    model_name: str | None = None,
    faults: Faults | None = None,
    api_key: str | None = None,
    max_batch_size: int = 32,
    batch_window: float = 0.01,
) -> LLMServer:
    """An OpenAI-compatible server over ``model``, bound but not yet serving.

    Parameters
    ----------
    model : LanguageModel, str or path
        A :class:`~trustlab.llm.LocalModel` (batched, streamed token by token, with
        log-probabilities), any other object with the ``LocalModel.generate(prompts,
        max_new_tokens, *, chat, temperature, random_state)`` method (a
        :class:`~trustlab.llm.LanguageModel`, served one request at a time, text only), or a
        model name or path, loaded with :func:`~trustlab.llm.load_model` once the other
        arguments are checked.
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
    max_batch_size : int, default 32
        The most choices (rows) a local model runs in one batch; 1 serves one at a time.
    batch_window : float, default 0.01
        Seconds in [0, 1]: a batch starts once no new request has arrived for this long (at most
        ten windows after the first waiting one) or when ``max_batch_size`` rows wait.

    Returns
    -------
    LLMServer
        Call ``.start()`` (a background thread) or use it as a context manager, which starts it
        and shuts it down on exit; ``.serve_forever()`` serves on the calling thread.

    Notes
    -----
    Endpoints: ``GET /v1/models``, ``GET /v1/models/<name>``, ``GET /health`` (open without the
    key: it says only ``{"status": "ok"}``), ``POST /v1/chat/completions`` and
    ``POST /v1/completions`` (also without the ``/v1`` prefix). A chat request with a single user
    message is generated with the chat template (as ``model.generate([content], chat=True)``);
    a longer conversation is rendered with the tokenizer's chat template (or, without one, as
    ``role: content`` lines ending in ``assistant:``) and generated as plain text. Request
    fields: ``max_tokens`` / ``max_completion_tokens`` (default 256, or what the model's context
    leaves after the prompt when that is less), ``temperature`` (in [0, 2],
    default 1.0 as in the OpenAI API), ``top_p``, ``n`` (up to 64), ``seed``, ``stop``,
    ``stream`` with ``stream_options.include_usage``, ``logprobs`` and ``top_logprobs`` (chat) or
    ``logprobs`` (completions, up to 20 alternatives); they are checked by the same rules as
    :class:`~trustlab.llm.RemoteModel`'s arguments. Any other field is refused with a 400 that
    names it unless it is null or at its "off" value (``tools: []``, ``frequency_penalty: 0``,
    ...). See ``docs/llm-remote.md`` for the whole list.

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
    _check_host(host)
    _check_port(port)
    _check_free(host, port)
    if model_name is not None:
        check_string(model_name, "model_name")
    if faults is not None and not isinstance(faults, Faults):
        raise InputError.bad("faults", "a trustlab.llm.server.Faults or None", faults)
    check_api_key(api_key)
    check_positive_int(max_batch_size, "max_batch_size")
    batch_window = check_in_range(batch_window, "batch_window", 0.0, 1.0)
    if loads:
        model = load_model(model)
    if model_name is None:
        model_name = getattr(model, "name", None) or "local-model"
    return LLMServer(
        model,
        host,
        port,
        model_name,
        faults,
        api_key,
        max_batch_size=int(max_batch_size),
        batch_window=batch_window,
    )


def serve(
    model: LanguageModel | str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    model_name: str | None = None,
    api_key: str | None = None,
    max_batch_size: int = 32,
    on_ready: Callable[[LLMServer], None] | None = None,
) -> None:
    """Serve ``model`` on ``host:port`` until Ctrl-C (blocking; see :func:`make_server`).

    ``model`` is a :class:`~trustlab.llm.LanguageModel` or a model name or path (loaded after
    the other arguments are checked). ``on_ready(server)``, when given, is called once the
    server listens (read ``server.url``; ``server.shutdown()`` from another thread also ends
    the call).
    """
    server = make_server(
        model, host, port, model_name=model_name, api_key=api_key, max_batch_size=max_batch_size
    )
    try:
        if on_ready is not None:
            on_ready(server)
        server.serve_forever()
    finally:
        server.shutdown()


def _check_host(host: str) -> None:
    """A name or IPv4 address of this machine: one a server can listen on (checked by binding a
    throw-away socket to any free port, before a model loads)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError.bad(
            "host", "an IPv4 address or name of this machine", f"{host} ({reason})"
        ) from None


def _check_free(host: str, port: int) -> None:
    """Whether the server can listen on ``host:port``, found out before a model loads (a busy
    port is a ResourceError, as when the server binds it; the probe sets SO_REUSEADDR as the
    server does, so a port with only closed connections in TIME_WAIT passes)."""
    if port == 0:
        return
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise ResourceError(f"could not listen on {host}:{port}: {exc}") from None


def _check_port(port: Any) -> int:
    """A TCP port number in [0, 65535] (0: any free port)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError.bad("port", "an integer port in [0, 65535]", port)
    return port

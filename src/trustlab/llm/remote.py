"""A client for OpenAI-compatible endpoints (vLLM, Ollama, llama.cpp server, ``trustlab llm serve``).

:class:`RemoteModel` has the same ``generate`` call as :class:`~trustlab.llm.LocalModel` (both are
a :class:`~trustlab.llm.LanguageModel`), so an evaluation takes either; ``completions`` asks the
server for token log-probabilities as ``LocalModel.completions`` computes them, and ``stream``
reads an answer as server-sent events while it is generated. Every request has a timeout; 408,
429, 5xx, timeouts and connection errors are retried with exponential backoff (honouring
``Retry-After``); when it gives up, a :class:`~trustlab.errors.BackendError` names the URL, the
last status and the server's words.

Why this module is long: the client is one class whose request paths (plain, log-probabilities,
streamed) share the retry, timeout, concurrency-slot and response-checking code kept here; split
across modules they would reach into each other's private helpers.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import json
import math
import queue
import random
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from trustlab._checks import (
    MAX_TIMEOUT_S,
    check_bool,
    check_in_range,
    check_non_negative,
    check_positive_int,
    check_string,
    shown_url,
)
from trustlab._lazy import require
from trustlab._progress import check_progress
from trustlab.errors import BackendError, InputError
from trustlab.llm._inputs import as_texts, check_api_key, check_messages, check_stop
from trustlab.llm.completion import Completion
from trustlab.llm.settings import check_seed, check_temperature, check_top_logprobs

__all__ = ["RemoteModel"]

MAX_BACKOFF_S = 30.0  # the longest wait the exponential schedule reaches
MAX_RETRY_AFTER_S = 60.0  # a server asking for a longer wait gets this much
_SNIPPET_CHARS = 300
# the client errors that are retried: 408 Request Timeout (the server gave up waiting for the
# request, e.g. trustlab's own server for a body that stalled) and 429 Too Many Requests. Not 409
# Conflict, which the openai client retries: RFC 9110 makes it a conflict the client must resolve
# before resubmitting (docs/llm-remote.md)
_RETRIED_4XX = (408, 429)

# the pause between attempts; a module attribute so tests can record waits instead of sleeping
_sleep = time.sleep
# hides the client's secrets in a text an error quotes (RemoteModel._hidden); None: nothing to hide
_Hide = Callable[[str], str] | None


class RemoteModel:
    """A model behind an OpenAI-compatible HTTP endpoint.

    Parameters
    ----------
    base_url : str
        The API root as OpenAI clients take it, e.g. ``"http://localhost:8000/v1"``. A URL with
        no path (``"http://localhost:8000"``, what ``make_server(...).url`` gives) gets ``/v1``.
        Credentials in it (``user:key@``) are sent as Basic auth and kept out of ``base_url``.
        Spaces and control characters are refused (percent-encode them, e.g. ``%20``).
    model : str
        The model id the endpoint serves (see :meth:`models`).
    api_key : str, optional
        Sent as ``Authorization: Bearer <api_key>``.
    timeout : float, default 60.0
        Seconds allowed for connecting, and for each read or write, per attempt; at most
        ``MAX_TIMEOUT_S`` (1e9, about 32 years: a socket's timeout ends near 9.2e9 s).
    max_retries : int, default 4
        Retries after the first attempt on 408, 429, 5xx, timeouts and connection errors.
        Other 4xx answers and malformed bodies are not retried.
    backoff : float, default 0.5
        The first wait in seconds; it doubles at every retry (capped at 30 s) with up to 25 %
        random jitter. A ``Retry-After`` header sets the wait when it is longer (capped at 60 s).
    max_concurrency : int, default 4
        The most requests in flight at once from this object, over all threads.

    Examples
    --------
    >>> model = RemoteModel("http://localhost:8000/v1", "smollm2-135m-instruct", timeout=30)
    >>> model.generate(["Name a colour.", "Name a fruit."], 16)  # doctest: +SKIP
    ['Blue.', 'An apple.']
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_concurrency: int = 4,
    ):
        self.base_url, auth = _check_base_url(base_url)
        self.model = check_string(model, "model")
        check_api_key(api_key)
        self.timeout = check_in_range(timeout, "timeout", 0.0, MAX_TIMEOUT_S, low_open=True)
        self.max_retries = check_positive_int(max_retries, "max_retries", minimum=0)
        self.backoff = check_non_negative(backoff, "backoff")
        self.max_concurrency = check_positive_int(max_concurrency, "max_concurrency")
        self._httpx = httpx = require("httpx", "llm")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            verify=_ssl_context(),
            headers=headers,
            auth=auth,
            limits=httpx.Limits(
                max_connections=self.max_concurrency,
                max_keepalive_connections=self.max_concurrency,
            ),
        )
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._streaming = threading.local()  # .held: the streams this thread holds open
        self._jitter = random.Random()
        # hidden in the server answers that errors quote (a proxy may echo the key it refused)
        secrets = [k for k in (api_key, auth and auth[1]) if k]
        if auth and auth[1]:  # an echoed Basic header shows them base64-encoded
            secrets.append(base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
        # the longest first: a short password inside the encoded header would break its match
        self._secrets = sorted(secrets, key=len, reverse=True)

    @property
    def name(self) -> str:
        """The model id (as ``LocalModel.name``)."""
        return self.model

    def __repr__(self) -> str:
        return f"RemoteModel({self.base_url!r}, {self.model!r})"

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def __enter__(self) -> RemoteModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public calls --------------------------------------------------------------------

    def chat(
        self,
        messages: str | Sequence[dict[str, str]],
        max_tokens: int = 256,
        temperature: float = 0.0,
        *,
        random_state: int | np.random.Generator | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        """The assistant's reply to a prompt (one user message) or a list of messages.

        Parameters
        ----------
        messages : str or list of dict
            A prompt string, or OpenAI messages ``[{"role": "user", "content": "..."}, ...]``
            (a content may also be a list of ``{"type": "text", "text": ...}`` parts).
        max_tokens : int, default 256
            The most tokens to generate.
        temperature : float, default 0.0
            In [0, 2]; 0 asks for greedy decoding.
        random_state : None, int or numpy.random.Generator
            Sent as the request's ``seed`` (not every server honours it).
        stop : str or list of str, optional
            Strings that end the reply.

        Returns
        -------
        str
            The reply text.
        """
        payload = self._payload(max_tokens, temperature, random_state, stop)
        payload["messages"] = check_messages(messages)
        return self._post_text(payload, chat=True)

    def complete(
        self,
        prompt: str,
        max_tokens: int = 256,
        temperature: float = 0.0,
        *,
        random_state: int | np.random.Generator | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> str:
        """The continuation of a plain prompt (``/completions``, no chat template).

        The arguments are those of :meth:`chat`, with one prompt string instead of messages.
        """
        if not isinstance(prompt, str):
            raise InputError.bad("prompt", "a string", prompt)
        as_texts(prompt, "prompt")  # one UTF-8 can encode
        payload = self._payload(max_tokens, temperature, random_state, stop)
        payload["prompt"] = prompt
        return self._post_text(payload, chat=False)

    def generate(
        self,
        prompts: str | Sequence[str],
        max_new_tokens: int = 64,
        *,
        chat: bool = True,
        temperature: float = 0.0,
        batch_size: int = 8,
        random_state: int | np.random.Generator | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """New text for each prompt, as ``LocalModel.generate`` returns it.

        Prompts are sent concurrently (at most ``max_concurrency`` at once), one request each:
        ``chat=True`` uses ``/chat/completions`` with the prompt as the user message,
        ``chat=False`` uses ``/completions``. ``batch_size`` is accepted for call compatibility
        with ``LocalModel.generate`` and has no effect here. Every request carries the same
        ``seed`` (one drawn from ``random_state`` when it is a Generator). ``progress``, if given,
        is called with ``(answers received, prompts in all)`` as answers arrive.

        Returns
        -------
        list of str
            One text per prompt, in the order of ``prompts``. The first failure (after its
            retries) raises :class:`~trustlab.errors.BackendError` and cancels the prompts not
            yet sent.
        """
        prompts = as_texts(prompts)
        check_positive_int(batch_size, "batch_size")
        chat = check_bool(chat, "chat")
        check_progress(progress)  # it is called only after an answer
        # checked once here, so a bad argument fails before any request
        payload = self._payload(
            max_new_tokens, temperature, random_state, None, tokens_name="max_new_tokens"
        )

        def run(prompt: str) -> str:
            return self._post_text(_with_prompt(payload, prompt, chat), chat=chat)

        return self._map(run, prompts, progress)

    def completions(
        self,
        prompts: str | Sequence[str],
        max_new_tokens: int = 64,
        *,
        chat: bool = True,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 8,
        random_state: int | np.random.Generator | None = None,
    ) -> list[Completion]:
        """Text and token log-probabilities for each prompt, as ``LocalModel.completions``.

        Each prompt is one request (sent concurrently, as in :meth:`generate`) that asks for
        log-probabilities: ``logprobs: true, top_logprobs: k`` on ``/chat/completions``
        (``chat=True``), ``logprobs: k`` on ``/completions``. A server that answers without them
        raises :class:`~trustlab.errors.BackendError`.

        Parameters
        ----------
        prompts, max_new_tokens, chat, temperature, batch_size, random_state
            As in :meth:`generate` (every request carries the same ``seed``).
        top_logprobs : int, default 0
            Alternatives to ask for per token, in [0, 20].
        stop : str or sequence of str, optional
            Strings that end each text.

        Returns
        -------
        list of Completion
        """
        prompts = as_texts(prompts)
        check_positive_int(batch_size, "batch_size")
        chat = check_bool(chat, "chat")
        top = check_top_logprobs(top_logprobs)
        payload = self._payload(
            max_new_tokens, temperature, random_state, stop, tokens_name="max_new_tokens"
        )
        payload.update({"logprobs": True, "top_logprobs": top} if chat else {"logprobs": top})
        path = "/chat/completions" if chat else "/completions"

        def run(prompt: str) -> Completion:
            data = self._request("POST", path, _with_prompt(payload, prompt, chat))
            return _choice_completion(data, chat, self._url(path), self._hidden)

        return self._map(run, prompts)

    def stream(
        self,
        messages: str | Sequence[dict[str, str]],
        max_tokens: int = 256,
        temperature: float = 0.0,
        *,
        chat: bool = True,
        random_state: int | np.random.Generator | None = None,
        stop: str | Sequence[str] | None = None,
    ) -> Iterator[str]:
        """The reply's text in pieces as the server generates it (``stream: true``).

        The arguments are those of :meth:`chat`; with ``chat=False`` ``messages`` is one prompt
        string sent to ``/completions``. They are checked now; the request is sent when the
        iteration starts. Failures before the server answers are retried as in :meth:`chat`; a
        stream that breaks after it answered (even before its first piece) or ends without
        ``[DONE]`` raises :class:`~trustlab.errors.BackendError`. Stopping the iteration early closes the
        connection (the server then stops generating).

        Examples
        --------
        >>> model = RemoteModel("http://localhost:8000/v1", "smollm2-135m-instruct")
        >>> for piece in model.stream("Tell me a story.", 32):  # doctest: +SKIP
        ...     print(piece, end="", flush=True)
        """
        payload = self._payload(max_tokens, temperature, random_state, stop)
        if chat:
            payload["messages"] = check_messages(messages)
        elif isinstance(messages, str):
            payload["prompt"] = as_texts(messages, "messages")[0]
        else:
            raise InputError.bad("messages", "a prompt string with chat=False", messages)
        payload["stream"] = True
        return self._stream_texts(payload, chat)

    def models(self) -> list[str]:
        """The model ids the endpoint lists at ``GET /models``."""
        data = self._request("GET", "/models", None)
        try:
            return [str(entry["id"]) for entry in data["data"]]
        except (KeyError, TypeError):
            raise BackendError(
                f"GET {self._url('/models')}: malformed response (no data[].id): "
                f"{_snippet(json.dumps(data), self._hidden)}"
            ) from None

    # -- the transport -----------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _payload(
        self,
        max_tokens: Any,
        temperature: Any,
        random_state: Any,
        stop: Any,
        *,
        tokens_name: str = "max_tokens",
    ) -> dict[str, Any]:
        """The checked request fields shared by every call (all but the prompt or messages)."""
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": check_positive_int(max_tokens, tokens_name),
            "temperature": check_temperature(temperature),
        }
        seed = check_seed(random_state)
        if seed is not None:
            payload["seed"] = seed
        stops = check_stop(stop)
        if stops is not None:
            payload["stop"] = stops
        return payload

    def _post_text(self, payload: dict[str, Any], *, chat: bool) -> str:
        """POST a checked payload to the chat or the completions endpoint; the answer's text."""
        path = "/chat/completions" if chat else "/completions"
        data = self._request("POST", path, payload)
        return _choice_text(data, "message" if chat else "text", self._url(path), self._hidden)

    def _map(
        self,
        run: Callable[[str], Any],
        prompts: list[str],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Any]:
        """``run`` on every prompt on ``max_concurrency`` worker threads, results in order;
        ``progress(done, total)`` after each answer.

        The first failure, or Ctrl-C, raises at once: the workers take no further prompt and
        are daemon threads, so nobody waits for the requests still in flight (a pool joined
        them, every retry and timeout included: Ctrl-C against an endpoint that does not
        answer took minutes).
        """
        if len(prompts) == 1:
            result = [run(prompts[0])]
            if progress is not None:
                progress(1, 1)
            return result
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(prompts)):
            todo.put(index)
        finished: queue.SimpleQueue[tuple[int, Any, BaseException | None]] = queue.SimpleQueue()
        stop = threading.Event()

        def work() -> None:
            while not stop.is_set():
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    finished.put((index, run(prompts[index]), None))
                except BaseException as exc:  # handed to the caller's thread
                    finished.put((index, None, exc))

        for _ in range(min(self.max_concurrency, len(prompts))):
            threading.Thread(target=work, name="remote-model", daemon=True).start()
        results: list[Any] = [None] * len(prompts)
        try:
            for done in range(1, len(prompts) + 1):
                while True:  # a wait with a timeout, so that Ctrl-C is handled while it waits
                    try:
                        index, value, exc = finished.get(timeout=0.1)
                        break
                    except queue.Empty:
                        continue
                if exc is not None:
                    raise exc
                results[index] = value
                if progress is not None:
                    progress(done, len(prompts))
        finally:
            stop.set()
        return results

    def _stream_texts(self, payload: dict[str, Any], chat: bool) -> Iterator[str]:
        """The text pieces of a streamed answer (holding one concurrency slot throughout)."""
        path = "/chat/completions" if chat else "/completions"
        url = self._url(path)
        self._check_free_slot()
        with self._slots:
            self._streaming.held = getattr(self._streaming, "held", 0) + 1
            try:
                response = self._request("POST", path, payload, stream=True)
            except BaseException:
                self._streaming.held -= 1
                raise
            skipped: list[str] = []  # the first lines that are no data: fields, for the error
            got_data = False
            try:
                for data in _sse_data(response, url, self._httpx, skipped, self._hidden):
                    got_data = True
                    if data == "[DONE]":
                        return
                    chunk = _decode(data, "POST", url, self._hidden)
                    if isinstance(chunk, dict) and chunk.get("error"):
                        failed = _snippet(data, self._hidden)
                        raise BackendError(f"POST {url}: the stream failed: {failed}")
                    for choice in _chunk_choices(chunk, url, self._hidden):
                        delta = choice.get("delta") or {}
                        piece = delta.get("content") if chat else choice.get("text")
                        if piece:
                            yield str(piece)
            finally:
                response.close()
                self._streaming.held -= 1
        kind = response.headers.get("content-type", "no content type")
        if not got_data and "event-stream" not in kind:  # a server that ignores stream: true
            raise BackendError(
                f"POST {url}: the reply to a streaming request is no event stream ({kind}, no "
                f"'data:' lines): the server does not stream; use chat() or complete() "
                f"instead: {_snippet(' '.join(skipped), self._hidden)}"
            )
        raise BackendError(f"POST {url}: the stream ended without [DONE]")

    def _check_free_slot(self) -> None:
        """Refuse a call that would wait forever: one made inside a ``stream()`` loop while this
        thread's own open streams hold every concurrency slot."""
        held = getattr(self._streaming, "held", 0)
        if held >= self.max_concurrency:
            raise InputError.bad(
                "max_concurrency",
                f"more than the {held} stream(s) this thread holds open, for a call made inside "
                "a stream() loop (it would wait for a slot that loop holds: finish the stream "
                "first, or raise max_concurrency)",
                self.max_concurrency,
            )

    def _request(
        self, method: str, path: str, payload: dict[str, Any] | None, *, stream: bool = False
    ) -> Any:
        """One call with retries; the decoded JSON body of the first 2xx answer.

        With ``stream=True``, the open 2xx response instead (the caller closes it and holds
        the concurrency slot).
        """
        httpx = self._httpx
        url = self._url(path)
        last = "no attempt made"
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                if stream:
                    request = self._client.build_request(method, url, json=payload)
                    response = self._client.send(request, stream=True)
                    if not 200 <= response.status_code < 300:
                        response.read()
                        response.close()
                else:
                    self._check_free_slot()
                    with self._slots:
                        response = self._client.request(method, url, json=payload)
            except httpx.TimeoutException:
                last = f"no answer within the {self.timeout:g} s timeout"
            except httpx.TransportError as exc:
                last = self._hidden(f"connection failed ({type(exc).__name__}: {exc})")
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return response if stream else _decode(response.text, method, url, self._hidden)
                last = f"HTTP {status}: {_snippet(response.text, self._hidden)}"
                if status not in _RETRIED_4XX and status < 500:
                    raise BackendError(f"{method} {url}: {last} (not retried)")
                retry_after = _parse_retry_after(response.headers.get("Retry-After"))
            if attempt < self.max_retries:
                _sleep(self._wait(attempt, retry_after))
        raise BackendError(
            f"{method} {url}: gave up after {self.max_retries + 1} attempt(s); last error: {last}"
        )

    def _hidden(self, text: str) -> str:
        """``text`` with the API key and the URL's password shown as ``***``."""
        for secret in self._secrets:
            # as written and as JSON writes it (an error quotes json.dumps of an answer: a
            # '"', a backslash or a non-ASCII password character is escaped there)
            for form in {secret, json.dumps(secret)[1:-1]}:
                text = text.replace(form, "***")
        return text

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before retry ``attempt + 1``: exponential with jitter, or Retry-After."""
        wait = min(self.backoff * 2**attempt, MAX_BACKOFF_S)
        wait += self._jitter.uniform(0.0, 0.25 * wait)  # spreads out clients that failed together
        if retry_after is not None:
            wait = max(wait, min(retry_after, MAX_RETRY_AFTER_S))
        return wait


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for every client (building one reads the CA bundle: ~0.2 s)."""
    import httpx

    return httpx.create_ssl_context()


def _check_base_url(base_url: Any) -> tuple[str, tuple[str, str] | None]:
    """The normalised URL without credentials, and the ``user:password@`` of one as Basic
    auth (kept out of the URL, which every error message and the repr show)."""
    expected = "an http(s) URL such as 'http://localhost:8000/v1'"
    if not isinstance(base_url, str):
        raise InputError.bad("base_url", expected, base_url)
    # a refused URL is shown without its credentials or query (shown_url: a password with an
    # unescaped '/', '?' or '#' hidden up to the last '@', an '@' in a query is no password)
    shown = shown_url(base_url)
    if any(c.isspace() or not c.isprintable() for c in base_url.strip()):
        # a host with a space was looked up (DNS failure after every retry, ~8 s); urlsplit
        # drops tabs and line breaks silently ('exa\tmple.com' became 'example.com')
        raise InputError.bad(
            "base_url", expected + " without spaces or control characters (%20 in a path)", shown
        )
    try:
        parts = urllib.parse.urlsplit(base_url.strip())
    except ValueError:  # e.g. 'http://[::1' (an unclosed IPv6 bracket)
        raise InputError.bad("base_url", expected, shown) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError.bad("base_url", expected, shown)
    try:
        port = parts.port  # raises ValueError on a port that is no number or above 65535
    except ValueError:
        port = 0
    if port == 0:  # port 0 cannot be connected to (a server asking for it gets a free one)
        raise InputError.bad("base_url", expected + " with a valid port (1 to 65535)", shown)
    if parts.query or parts.fragment:  # paths are appended to it: a query would be lost
        raise InputError.bad(
            "base_url", expected + " without a query (?...) or fragment (#...)", shown
        )
    if "@" in parts.path:  # 'user:12345/pw@host' parsed as host 'user', port 12345, path '/pw@host'
        raise InputError.bad(
            "base_url", expected + " with no '@' after the host (a password's '/' as %2F)", shown
        )
    path = parts.path.rstrip("/") or "/v1"
    netloc = parts.netloc.rpartition("@")[2]
    auth = None
    if parts.username is not None:
        auth = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, "", "")), auth


def _decode(text: str, method: str, url: str, hide: _Hide = None) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise BackendError(
            f"{method} {url}: malformed response (not JSON): {_snippet(text, hide)}"
        ) from None


def _with_prompt(payload: dict[str, Any], prompt: str, chat: bool) -> dict[str, Any]:
    """The payload for one prompt: a user message (chat) or the plain prompt."""
    if chat:
        return {**payload, "messages": [{"role": "user", "content": prompt}]}
    return {**payload, "prompt": prompt}


def _sse_data(
    response: Any, url: str, httpx: Any, skipped: list[str], hide: _Hide = None
) -> Iterator[str]:
    """The ``data:`` fields of a server-sent-event stream (comments and other fields skipped;
    the first 20 of those are kept in ``skipped``, for an error)."""
    try:
        for line in response.iter_lines():
            if line.startswith("data:"):
                yield line[5:].strip()
            elif len(skipped) < 20:
                skipped.append(line)
    except httpx.TimeoutException:
        raise BackendError(f"POST {url}: the stream stalled (no data within the timeout)") from None
    except httpx.TransportError as exc:
        broke = _snippet(f"{type(exc).__name__}: {exc}", hide)
        raise BackendError(f"POST {url}: the stream broke ({broke})") from None


def _chunk_choices(chunk: Any, url: str, hide: _Hide = None) -> list[dict[str, Any]]:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        shown = _snippet(json.dumps(chunk), hide)
        raise BackendError(f"POST {url}: malformed stream chunk: {shown}")
    return choices


def _choice_completion(data: Any, chat: bool, url: str, hide: _Hide = None) -> Completion:
    """``choices[0]`` with its log-probabilities as a Completion."""
    text = _choice_text(data, "message" if chat else "text", url, hide)
    choice = data["choices"][0]
    logprobs = choice.get("logprobs")
    if not logprobs:
        raise BackendError(
            f"POST {url}: the response has no logprobs (the server does not offer them)"
        )
    try:  # JSON's types checked: a string of tokens or a NaN is malformed, not read as values
        if chat:
            entries = _of(list, logprobs["content"] or [])
            tokens = [_of(str, e["token"]) for e in entries]
            values = [_logprob(e["logprob"]) for e in entries]
            # no alternatives asked for: some servers leave top_logprobs out or null
            tops = [[(_of(str, t["token"]), _logprob(t["logprob"]))
                     for t in _of(list, e.get("top_logprobs") or [])]
                    for e in entries]  # fmt: skip
        else:
            tokens = [_of(str, t) for t in _of(list, logprobs["tokens"])]
            values = [_logprob(v) for v in _of(list, logprobs["token_logprobs"])]
            tops_by_token = _of(list, logprobs.get("top_logprobs") or [None] * len(tokens))
            tops = [sorted(((_of(str, t), _logprob(v)) for t, v in _of(dict, top or {}).items()),
                           key=lambda tv: -tv[1]) for top in tops_by_token]  # fmt: skip
        if not len(tokens) == len(values) == len(tops):
            raise ValueError("one log-probability and one set of alternatives per token")
        if text and not tokens:  # a total of 0 (probability 1) for a text of no token
            raise ValueError("a text with no token")
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BackendError(
            f"POST {url}: malformed logprobs: {_snippet(json.dumps(logprobs), hide)}"
        ) from None
    return Completion(
        text=text,
        finish_reason=str(choice.get("finish_reason") or "stop"),
        tokens=tuple(tokens),
        logprobs=tuple(values),
        top_logprobs=tuple(tuple(top) for top in tops),
    )


def _of(kind: type, value: Any) -> Any:
    """``value`` when it is of JSON's ``kind`` (list, dict, str), else a TypeError."""
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _logprob(value: Any) -> float:
    """A JSON number that is not NaN (-inf, or vLLM's -9999.0, are log-probabilities too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def _choice_text(data: Any, field: str, url: str, hide: _Hide = None) -> str:
    """``choices[0].message.content`` (chat) or ``choices[0].text`` (completions)."""
    where = "choices[0].message.content" if field == "message" else "choices[0].text"
    malformed = BackendError(
        f"POST {url}: malformed response (no {where}): {_snippet(json.dumps(data), hide)}"
    )
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] if field == "message" else choice["text"]
    except (KeyError, IndexError, TypeError):
        raise malformed from None
    if text is None:  # a reply with no text (e.g. only tool calls)
        return ""
    if not isinstance(text, str):
        raise malformed
    return text


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _snippet(text: str, hide: _Hide) -> str:
    """A server's words for an error: secrets hidden (before the cut, so no part of one is
    left at the end), whitespace collapsed, at most ``_SNIPPET_CHARS`` characters."""
    text = str(text) if hide is None else hide(str(text))
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 3] + "..."

"""The OpenAI chat and completions schema (no HTTP, no model calls here).

:func:`parse_chat` and :func:`parse_completion` check a decoded request body once and turn it
into a :class:`Request`; :class:`Reply` turns the decoding steps of its choices into the response
object, or into the chunks of a server-sent-event stream. A field this server does not implement
is refused with a 400 that names it (:class:`RequestError`), unless it is absent, null, or set to
the value that means "off" (``frequency_penalty: 0``, ``tools: []``, ...); fields that only label
the request for the caller (``user``, ``metadata``, ...) are accepted and do not change the answer.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from trustlab._checks import check_bool, check_positive_int
from trustlab.errors import InputError
from trustlab.llm._inputs import as_texts, check_messages, check_stop, check_top_p
from trustlab.llm.settings import check_seed, check_temperature, check_top_logprobs

DEFAULT_MAX_TOKENS = 256
# the OpenAI API's default temperature (the client's, RemoteModel's, is 0: greedy)
DEFAULT_TEMPERATURE = 1.0
MAX_N = 64

_COMMON = {"model", "max_tokens", "temperature", "top_p", "n", "seed", "stop", "stream",
           "stream_options", "logprobs"}  # fmt: skip
_FIELDS = {
    "chat": _COMMON | {"messages", "max_completion_tokens", "top_logprobs"},
    "completion": _COMMON | {"prompt", "best_of"},
}
# labels for the caller's own bookkeeping: they never change an answer
_NO_EFFECT = {"user", "metadata", "safety_identifier", "prompt_cache_key"}
# accepted only when null or at the value that turns them off; the text says what is accepted
_OFF: dict[str, tuple[tuple[Any, ...], str]] = {
    "frequency_penalty": ((0,), "0"),
    "presence_penalty": ((0,), "0"),
    "logit_bias": (({},), "{}"),
    "tools": (([],), "[] (no tool calls)"),
    "functions": (([],), "[] (no function calls)"),
    "tool_choice": (("none", "auto"), '"none" or "auto" without tools'),
    "function_call": (("none", "auto"), '"none" or "auto" without functions'),
    "parallel_tool_calls": ((True, False), "true or false without tools"),
    "response_format": (({"type": "text"},), '{"type": "text"}'),
    "modalities": ((["text"],), '["text"]'),
    "store": ((False,), "false (nothing is stored)"),
    "service_tier": (("auto", "default"), '"auto" or "default"'),
    "echo": ((False,), "false"),
    "suffix": (("",), '""'),
}


class RequestError(Exception):
    """A request the server refuses: HTTP status, message, OpenAI error type, offending field."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        param: str | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.param = param


@dataclass
class Request:
    """A checked chat or completions request: what to generate and how to answer."""

    endpoint: str  # "chat" or "completion"
    prompts: list[str]
    chat: bool  # wrap each prompt as one user turn of the chat template
    n: int = 1
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = 1.0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    logprobs: int | None = None  # alternatives per token; None: no log-probabilities
    stream: bool = False
    include_usage: bool = False
    max_tokens_field: str = "max_tokens"
    max_tokens_given: bool = False  # False: the default, shortened to what the context leaves


def parse_chat(body: dict[str, Any], model_name: str, tokenizer: Any) -> Request:
    """A ``/chat/completions`` body as a Request (the tokenizer renders conversations)."""
    _check_fields(body, "chat", model_name)
    request = _common(body, "chat", [], True)
    messages = check_messages(body.get("messages"))
    if len(messages) == 1 and messages[0]["role"] == "user":
        request.prompts = [messages[0]["content"]]
    else:
        request.prompts, request.chat = [render_conversation(messages, tokenizer)], False
    wanted = _get(body, "max_completion_tokens")
    if wanted is not None:
        old = _get(body, "max_tokens")
        if old is not None and old != wanted:
            raise RequestError(
                400,
                "max_completion_tokens: conflicts with max_tokens; send one of them",
                param="max_completion_tokens",
            )
        request.max_tokens = check_positive_int(wanted, "max_completion_tokens")
        request.max_tokens_field = "max_completion_tokens"
        request.max_tokens_given = True
    top = _get(body, "top_logprobs")
    if check_bool(_get(body, "logprobs", False), "logprobs"):
        request.logprobs = 0 if top is None else check_top_logprobs(top)
    elif top is not None:
        raise RequestError(400, "top_logprobs: needs logprobs: true", param="top_logprobs")
    return request


def parse_completion(body: dict[str, Any], model_name: str) -> Request:
    """A ``/completions`` body as a Request (plain continuation, no chat template)."""
    _check_fields(body, "completion", model_name)
    request = _common(body, "completion", as_texts(body.get("prompt"), "prompt"), False)
    best_of = _get(body, "best_of")
    if best_of is not None and best_of not in (1, request.n):
        raise RequestError(400, "best_of: not supported by this server (only n)", param="best_of")
    logprobs = _get(body, "logprobs")
    if logprobs is not None:
        request.logprobs = check_top_logprobs(logprobs, "logprobs")
    return request


def _get(body: dict[str, Any], key: str, default: Any = None) -> Any:
    """A field's value; null is the same as absent."""
    value = body.get(key)
    return default if value is None else value


def _json_seed(value: Any) -> int | None:
    """A request's seed: null or an integer >= 0 (said in JSON's words, not Python's)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InputError.bad("seed", "null or an integer >= 0", value)
    return check_seed(value, "seed")


def _check_fields(body: dict[str, Any], endpoint: str, model_name: str) -> None:
    requested = body.get("model")
    if requested is not None and not isinstance(requested, str):  # a type error, not a lookup
        raise InputError.bad("model", "null or a model id (a string)", requested)
    if requested is not None and requested != model_name:
        raise RequestError(
            404,
            f"model {requested!r} not found; this server serves {model_name!r}",
            "model_not_found",
            param="model",
        )
    for key, value in body.items():
        if key in _FIELDS[endpoint] or key in _NO_EFFECT or value is None:
            continue
        allowed, text = _OFF.get(key, ((), ""))
        if any(_same(value, a) for a in allowed):
            continue
        accepted = f"; accepted: {text} or null" if text else ""
        raise RequestError(400, f"{key}: not supported by this server{accepted}", param=key)


def _same(value: Any, allowed: Any) -> bool:
    """Equal, without counting true as 1 or 0 as false."""
    if isinstance(value, bool) or isinstance(allowed, bool):
        return value is allowed
    return value == allowed


def _common(body: dict[str, Any], endpoint: str, prompts: list[str], chat: bool) -> Request:
    """The fields both endpoints share, checked by the rules the clients use."""
    n = check_positive_int(_get(body, "n", 1), "n")
    if n > MAX_N:
        raise InputError.bad("n", f"an integer in [1, {MAX_N}]", n)
    stream = check_bool(_get(body, "stream", False), "stream")
    options = _get(body, "stream_options")
    include_usage = False
    if options is not None:
        if not stream:
            raise RequestError(
                400, "stream_options: only allowed with stream: true", param="stream_options"
            )
        include_usage = _stream_options(options)
    return Request(
        endpoint=endpoint,
        prompts=prompts,
        chat=chat,
        n=n,
        max_tokens=check_positive_int(_get(body, "max_tokens", DEFAULT_MAX_TOKENS), "max_tokens"),
        max_tokens_given=_get(body, "max_tokens") is not None,
        temperature=check_temperature(_get(body, "temperature", DEFAULT_TEMPERATURE)),
        top_p=check_top_p(_get(body, "top_p", 1.0)),
        seed=_json_seed(_get(body, "seed")),
        stop=check_stop(_get(body, "stop")) or [],
        stream=stream,
        include_usage=include_usage,
    )


def _stream_options(options: Any) -> bool:
    """``include_usage`` from ``stream_options`` (no other option is implemented)."""
    if not isinstance(options, dict):
        raise InputError.bad("stream_options", 'an object like {"include_usage": true}', options)
    for key, value in options.items():
        if key == "include_usage" or value is None or (key == "include_obfuscation" and not value):
            continue
        raise RequestError(
            400,
            f"stream_options.{key}: not supported by this server (only include_usage)",
            param=f"stream_options.{key}",
        )
    return check_bool(options.get("include_usage") or False, "stream_options.include_usage")


def render_conversation(messages: list[dict[str, str]], tokenizer: Any) -> str:
    """A multi-message conversation as one prompt string (the model's chat template)."""
    if getattr(tokenizer, "chat_template", None):
        try:
            text = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        except Exception as exc:  # templates raise on conversations they do not allow
            raise RequestError(
                400, f"messages: the model's chat template refused them: {exc}", param="messages"
            ) from None
        # the plain-prompt path tokenizes with special tokens: drop a BOS the template added
        bos = getattr(tokenizer, "bos_token", None)
        if bos and text.startswith(bos) and _adds_bos(tokenizer):
            text = text[len(bos) :]
        return text
    lines = [f"{m['role']}: {m['content']}" for m in messages]
    return "\n".join([*lines, "assistant:"])


def _adds_bos(tokenizer: Any) -> bool:
    """Whether encoding a plain string prepends the BOS token."""
    try:
        ids = tokenizer("a")["input_ids"]
    except Exception:
        return False
    return bool(ids) and ids[0] == getattr(tokenizer, "bos_token_id", None)


def models_list(model_name: str) -> dict[str, Any]:
    entry = {"id": model_name, "object": "model", "created": 0, "owned_by": "trustlab"}
    return {"object": "list", "data": [entry]}


# --------------------------------------------------------------------------------------------
# Answers: one response object, or the chunks of a stream
# --------------------------------------------------------------------------------------------


class Reply:
    """Builds the answer to one Request from its choices' decoding steps."""

    def __init__(self, request: Request, model_name: str):
        self.request = request
        chat = request.endpoint == "chat"
        self._head = {
            "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": model_name,
        }
        self._chat = chat
        self._offsets: dict[int, int] = {}  # completions: text offset of each choice's next token

    # -- one response ---------------------------------------------------------------------

    def body(self, steps: dict[int, list[Any]], prompt_tokens: int | None) -> dict[str, Any]:
        """The whole response from every choice's steps (choice index -> its steps in order)."""
        choices = []
        for index in sorted(steps):
            text = "".join(s.text for s in steps[index])
            entries = [e for s in steps[index] for e in s.logprobs]
            finish = steps[index][-1].finish_reason or "stop"
            choice: dict[str, Any] = {"index": index}
            if self._chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            choice["logprobs"] = self._logprobs(index, entries)
            choice["finish_reason"] = finish
            choices.append(choice)
        response = {**self._head, "choices": choices}
        usage = _usage(steps, prompt_tokens)
        if usage is not None:
            response["usage"] = usage
        return response

    # -- a stream ---------------------------------------------------------------------------

    def opening_chunks(self) -> list[dict[str, Any]]:
        """Chat streams start with the assistant role for every choice."""
        if not self._chat:
            return []
        n = len(self.request.prompts) * self.request.n
        return [self._chunk(i, {"role": "assistant", "content": ""}, None, None) for i in range(n)]

    def step_chunks(self, index: int, step: Any) -> list[dict[str, Any]]:
        """The chunks for one decoding step of choice ``index``: new text, then the finish."""
        chunks = []
        if step.text or step.logprobs:
            delta = {"content": step.text} if self._chat else step.text
            chunks.append(self._chunk(index, delta, self._logprobs(index, step.logprobs), None))
        if step.finish_reason is not None:
            chunks.append(self._chunk(index, {} if self._chat else "", None, step.finish_reason))
        return chunks

    def usage_chunk(self, steps: dict[int, list[Any]], prompt_tokens: int | None) -> dict | None:
        """The last chunk of a stream with ``include_usage``: no choices, the token counts."""
        usage = _usage(steps, prompt_tokens)
        if usage is None:
            return None
        return {**self._chunk_head(), "choices": [], "usage": usage}

    def _chunk_head(self) -> dict[str, Any]:
        head = dict(self._head)
        if self._chat:
            head["object"] = "chat.completion.chunk"
        return head

    def _chunk(self, index: int, delta: Any, logprobs: Any, finish: str | None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": index}
        if self._chat:
            choice["delta"] = delta
        else:
            choice["text"] = delta
        choice["logprobs"] = logprobs
        choice["finish_reason"] = finish
        chunk = {**self._chunk_head(), "choices": [choice]}
        if self.request.include_usage:
            chunk["usage"] = None
        return chunk

    # -- log-probabilities ------------------------------------------------------------------

    def _logprobs(self, index: int, entries: list[Any]) -> dict[str, Any] | None:
        if self.request.logprobs is None:
            return None
        if self._chat:
            content = [
                {
                    **_token(e.token, e.logprob),
                    "top_logprobs": [_token(t, v) for t, v in e.top],
                }
                for e in entries
            ]
            return {"content": content, "refusal": None}
        offsets = []
        for e in entries:
            offsets.append(self._offsets.get(index, 0))
            self._offsets[index] = offsets[-1] + len(e.token)
        return {
            "tokens": [e.token for e in entries],
            "token_logprobs": [e.logprob for e in entries],
            "top_logprobs": [_top_dict(e.top) for e in entries],
            "text_offset": offsets,
        }


def _token(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _top_dict(top: Any) -> dict[str, float]:
    """Alternatives as the completions API gives them: token -> log-probability (best kept)."""
    out: dict[str, float] = {}
    for token, value in top:
        out.setdefault(token, value)
    return out


def _usage(steps: dict[int, list[Any]], prompt_tokens: int | None) -> dict[str, int] | None:
    """Token counts: prompts once, every generated token of every choice (None if unknown)."""
    counts = [s[-1].n_tokens if s else 0 for s in steps.values()]
    if prompt_tokens is None or any(c is None for c in counts):
        return None
    completion = sum(counts)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
    }

"""The input rules of the language-model path, one copy shared by local, remote and server.

Each public entry (``LocalModel``, ``RemoteModel``, the OpenAI-compatible server) validates its
arguments with these functions once, before any work; what they return is trusted from there on.
The rules follow the OpenAI API where it has one: a temperature in [0, 2], a seed that is a
non-negative integer, stop strings that are not empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trustlab._checks import check_in_range
from trustlab.errors import InputError

_MESSAGES = (
    "a prompt string or a non-empty list of {'role': str, 'content': str or a list of "
    "text parts} dicts"
)


# Below this temperature decoding is greedy: float32 logits divided by it overflow (softmax then
# fails), and sampling at it would pick the most likely token anyway, bar exactly tied logits.
GREEDY_BELOW = 1e-30


def samples(temperature: float) -> bool:
    """Whether ``temperature`` samples (greedy below :data:`GREEDY_BELOW`, e.g. 0 or 1e-40)."""
    return temperature >= GREEDY_BELOW


def check_top_p(value: Any, name: str = "top_p") -> float:
    """Nucleus sampling's probability mass in (0, 1] (1: the whole vocabulary)."""
    return check_in_range(value, name, 0.0, 1.0, low_open=True)


def as_texts(values: Any, name: str = "prompts") -> list[str]:
    """One string, or a non-empty sequence of strings, as a list of strings."""
    if isinstance(values, str):
        _check_utf8(values, name)
        return [values]
    if not isinstance(values, Sequence) or not all(isinstance(v, str) for v in values):
        raise InputError.bad(name, "a string or a sequence of strings", values)
    if len(values) == 0:
        raise InputError.bad(name, "at least one string", values)
    for i, value in enumerate(values):
        _check_utf8(value, f"{name}[{i}]")
    return list(values)


def _check_utf8(text: str, name: str) -> None:
    """Refuse a string UTF-8 cannot encode (a lone surrogate such as JSON's ``"\\ud800"``): the
    tokenizer fails on it with a TypeError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = text[err.start : err.end]
        raise InputError(
            f"{name}: expected text UTF-8 can encode, got the lone surrogate {bad!r} at "
            f"character {err.start}",
            argument=name,
        ) from None


def as_prompts(prompts: Any, chat: Any) -> list[str | list[dict]]:
    """Prompt strings, or with ``chat`` also conversations (lists of message dicts)."""
    if isinstance(prompts, str) or not isinstance(prompts, Sequence):
        return as_texts(prompts)
    if prompts and all(isinstance(p, dict) for p in prompts):
        prompts = [prompts]  # one conversation alone
    if not any(isinstance(p, Sequence) and not isinstance(p, str) for p in prompts):
        return as_texts(prompts)
    if chat is not True:
        raise InputError.bad("prompts", "strings (conversations need chat=True)", prompts)
    return [p if isinstance(p, str) else check_messages(p) for p in prompts]


def check_stop(stop: Any) -> list[str] | None:
    """Stop strings: None, one non-empty string, or a sequence of them (as a list)."""
    if stop is None:
        return None
    stops = [stop] if isinstance(stop, str) else stop
    if not isinstance(stops, Sequence) or not all(isinstance(s, str) and s for s in stops):
        raise InputError.bad("stop", "a string or a list of non-empty strings", stop)
    for s in stops:
        _check_utf8(s, "stop")
    return list(stops)


def check_messages(messages: Any) -> list[dict[str, str]]:
    """Chat messages as ``[{"role": str, "content": str}]``; a string is one user message.

    A message's content is a string or a list of OpenAI text parts
    (``[{"type": "text", "text": "..."}]``), which are joined.
    """
    if isinstance(messages, str):
        _check_utf8(messages, "messages")
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, Sequence) or not messages:
        raise InputError.bad("messages", _MESSAGES, messages)
    checked = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        text = _text(content)
        if text is None or not isinstance(message.get("role"), str):
            raise InputError.bad("messages", _MESSAGES, message)
        _check_utf8(message["role"], "messages")
        _check_utf8(text, "messages")
        checked.append({"role": message["role"], "content": text})
    return checked


def _text(content: Any) -> str | None:
    """A message content's text (a string, or joined text parts); None when it is neither."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "".join(part["text"] for part in content)
    return None


def check_api_key(api_key: Any) -> str | None:
    """None or a non-empty string that an ``Authorization: Bearer`` header can carry (printable
    ASCII, spaces inside or in front but none at its end); the error never shows the key.

    A key read from a file with its line break (``open(path).read()``) was sent as such: httpx
    refused the header, the client retried it as a connection failure and its error quoted the
    key; a non-ASCII key was a bare UnicodeEncodeError.
    """
    if api_key is not None and (not isinstance(api_key, str) or not api_key):
        got = (
            "an empty string"
            if api_key == ""
            else f"a value of type {type(api_key).__name__} (hidden)"
        )
        raise InputError(
            f"api_key: expected a non-empty string or None, got {got}", argument="api_key"
        )
    if api_key is not None:
        bad = next((i for i, c in enumerate(api_key) if not " " <= c <= "~"), None)
        if bad is not None or api_key.endswith(" "):
            char = api_key[bad] if bad is not None else " "
            what = {"\n": "a line break", "\r": "a line break", "\t": "a tab", " ": "a space"}.get(
                char, "a non-ASCII character" if ord(char) > 127 else "a control character"
            )
            where = f"at position {bad}" if bad is not None else "at its end"
            raise InputError(
                "api_key: expected printable ASCII characters (an HTTP Authorization header "
                f"carries no other, nor a space at its end), got a key with {what} {where} "
                "(hidden; a key read from a file may end in a line break: strip it)",
                argument="api_key",
            )
    return api_key

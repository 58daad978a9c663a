"""Provenance checkers: where the values an agent's action uses come from.

Prompt injections make an agent act with values the user never gave (an attacker's IBAN, URL or
e-mail address). These deterministic checkers compare an action's arguments with what the user's
request and the trajectory so far contain:

- ``argument_mentioned``: every value of the named arguments appears in the user's request, in an
  earlier call's arguments or in the output of chosen tools;
- ``intent_mentions``: the user's request uses certain words (e.g. "password");
- ``no_secret_disclosed``: the arguments carry no secret read earlier (a value under given keys of
  an earlier tool output) that the request itself does not contain.

Importing :mod:`trustlab.agents.guardrail` registers them, so a policy can name them in its
``checkers``. They were written for the AgentDojo suite policies (:mod:`trustlab.agents.agentdojo`)
but assume nothing about AgentDojo.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from trustlab._lazy import require
from trustlab.agents._names import nfc
from trustlab.agents.checkers import CheckContext, register_checker
from trustlab.agents.policy import Action, Step  # noqa: F401  (the doctests use Step)
from trustlab.errors import InputError

__all__ = ["argument_mentioned", "intent_mentions", "no_secret_disclosed"]

# ---------------------------------------------------------------------------------- text matching


def _norm(text: Any) -> str:
    # NFC: "Zoë" typed as "Zoe" + a combining diaeresis is the same text as the one-character
    # "ë" (it did not match it, and "Zoe" matched inside it)
    return " ".join(nfc(str(text)).lower().split())


@functools.lru_cache(maxsize=4096)
def _pattern(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)")


# a plain number (no sign: "5" in a text does not name -5) and the numbers a text writes, with
# thousands separators ("1,000"), decimals ("99.50") and exponents ("1e+20": not 20); a dot is
# always the decimal point and a comma a thousands separator ("1.000,50" is no number)
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_TEXT_NUMBER = re.compile(
    r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d{1,4})?(?!\w|[.,]\d)"
)


def _mentions(text: str, value: str, *, whole: bool = True) -> bool:
    """Whether normalised ``value`` occurs in normalised ``text`` as a whole token sequence; a
    number also when the text writes it differently (``100.0`` in "pay 100", ``1000`` in "1,000").
    ``whole=False`` also counts a match next to a combining mark: a secret looked for in what an
    action sends ("X1234" + U+0301 still discloses X1234)."""
    if not value:
        return False
    if _PLAIN_NUMBER.fullmatch(value) is None:
        matches = _pattern(value).finditer(text) if value in text else ()
        return any(not whole or _whole(text, m) for m in matches)
    # only as a whole number of the text (12 is not in "12.3" nor in "1.12"), compared as exact
    # decimals (floats would equal the account numbers 12345678901234567890 and ...891)
    number = Decimal(value)
    return any(Decimal(m.replace(",", "")) == number for m in _TEXT_NUMBER.findall(text))


def _mark(char: str) -> bool:
    """A combining mark (Unicode Mn/Mc): part of the word it follows, though ``\\w`` leaves it
    out (the vowel signs of Devanagari or Thai words)."""
    return unicodedata.category(char) in ("Mn", "Mc")


def _whole(text: str, match: re.Match[str]) -> bool:
    """A match not cut out of a word at a combining mark ("भेज" is not in "भेजें")."""
    before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
    return not (before and _mark(before)) and not (after and _mark(after))


def _words(text: str) -> list[str]:
    """The words of four characters or more: runs of letters and digits with their combining
    marks (``[^\\W_]`` alone cut a Hindi word at each vowel sign into pieces too short to count:
    a Hindi argument had no words to trace, and every request passed)."""
    out, word = [], ""
    for char in text + " ":
        if char.isalnum() or (word and _mark(char)):
            word += char
        else:
            if len(word) >= 4:
                out.append(word)
            word = ""
    return out


_URL = re.compile(r"(?:https?://|www\.)[^\s\"'<>()\[\]]+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _emails(text: str) -> list[str]:
    """The addresses in ``text``, their combining marks included: ``\\w`` leaves the marks out,
    so "राम@example.com" gave "म@example.com", which its own text did not name whole. The marks
    are read as letters (a same-length stand-in) for the match and cut from ``text`` itself."""
    marked = "".join("a" if _mark(c) else c for c in text)
    return [text[m.start() : m.end()] for m in _EMAIL.finditer(marked)]


_STOPWORDS = frozenset(
    "with from that this have your about into over after before there their".split()
)
_EXTRACT = ("value", "urls", "emails", "words")


def _scalars(value: Any) -> list[str]:
    """The string/number leaves of an argument value, however nested in lists and mappings (a
    value inside ``{"iban": ...}`` is still a value to trace)."""
    out: list[str] = []
    stack = [value]  # not recursive: a request nested 500 deep raised RecursionError
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, bool):
            continue
        if isinstance(node, float) and math.isfinite(node):  # 1e+20 as the text writes it
            out.append(format(Decimal(repr(node)), "f"))
        elif isinstance(node, (str, int, float)):
            out.append(str(node))
        elif isinstance(node, (list, tuple)):
            stack.extend(reversed(node))
        elif isinstance(node, Mapping):
            stack.extend(reversed(list(node.values())))
    return out


def _values(action: Action, arguments: Sequence[str], extract: str) -> list[str]:
    out: list[str] = []
    for name in arguments:
        for raw in _scalars(action.arguments.get(name)):
            if extract == "urls":
                out.extend(m.rstrip(".,;:!?") for m in _URL.findall(raw))
            elif extract == "emails":
                out.extend(_emails(raw))
            elif extract == "words":  # in NFC first: "zoe" + U+0308 is the 3-letter "zoë"
                out.extend(w for w in _words(_norm(raw)) if w not in _STOPWORDS)
            else:
                out.append(raw)
    return [v for v in (_norm(v) for v in out) if v]


@functools.lru_cache(maxsize=2048)
def _field_values(observation: str, fields: tuple[str, ...]) -> tuple[str, ...]:
    """Values under the keys ``fields`` (at any depth) of a YAML/JSON tool output."""
    yaml = require("yaml", "agents")
    try:
        data = yaml.safe_load(observation)
    except yaml.YAMLError:
        return ()
    found: list[str] = []
    # YAML aliases make one node a child of many: each container is visited once per pass, or a
    # few lines of anchors doubling a list ("billion laughs") cost 2^lines (the values are the
    # same whichever path reaches them)
    walked: set[int] = set()
    collected: set[tuple[int, bool]] = set()

    def leaves(node: Any, keys: bool = True) -> None:
        # under a field: a mapping's keys and values; inside a list only the values, as _scalars
        if isinstance(node, (Mapping, list)):
            if (id(node), keys) in collected:
                return
            collected.add((id(node), keys))
        if isinstance(node, Mapping):
            for k, v in node.items():
                if keys:
                    found.append(_norm(k))
                leaves(v, keys)
        elif isinstance(node, list):
            for item in node:
                leaves(item, False)
        else:
            found.extend(_norm(s) for s in _scalars(node))

    def walk(node: Any) -> None:
        if isinstance(node, (Mapping, list)):
            if id(node) in walked:
                return
            walked.add(id(node))
        if isinstance(node, Mapping):
            for k, v in node.items():
                if str(k) in fields:
                    leaves(v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    return tuple(found)


def _source_spec(source: Any, i: int) -> dict[str, Any]:
    if source in ("intent", "calls"):
        return {"kind": source}
    if isinstance(source, Mapping) and "tool" in source:
        unknown = set(source) - {"tool", "fields", "named_in_intent"}
        if unknown:
            raise InputError.bad(
                f"sources[{i}]", "keys tool, fields, named_in_intent", sorted(unknown)
            )
        tools = source["tool"]
        # tool names in NFC, as Action.name: a decomposed "tool" matched no step
        tools = (
            None
            if tools == "*"
            else frozenset(map(nfc, [tools] if isinstance(tools, str) else tools))
        )
        fields = source.get("fields")
        return {
            "kind": "tool",
            "tools": tools,
            "fields": tuple(fields) if fields else None,
            "named_in_intent": source.get("named_in_intent"),
        }
    raise InputError.bad(
        f"sources[{i}]", "'intent', 'calls' or {'tool': name, 'fields': [...]}", source
    )


def _corpus(ctx: CheckContext, sources: Sequence[dict[str, Any]]) -> Iterable[str]:
    """The normalised texts a value may come from, in the order the sources list them."""
    intent = _norm(ctx.task_intent)
    for src in sources:
        if src["kind"] == "intent":
            yield intent
        elif src["kind"] == "calls":
            for step in ctx.history:
                yield from (_norm(v) for v in _scalars(list(step.action.arguments.values())))
        else:
            for step in ctx.history:
                if step.observation is None:
                    continue
                if src["tools"] is not None and step.action.name not in src["tools"]:
                    continue
                named = src["named_in_intent"]
                if named is not None and not all(
                    _mentions(intent, v) for v in _values(step.action, [named], "value")
                ):
                    continue
                if src["fields"] is None:
                    yield _norm(step.observation)
                else:
                    yield from _field_values(step.observation, src["fields"])


def _names(value: Any, argument: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError.bad(argument, "a name or a non-empty list of names", value)


# ---------------------------------------------------------------------------------- the checkers


@register_checker("argument_mentioned")
def argument_mentioned(
    arguments: str | Sequence[str],
    sources: Sequence[Any] = ("intent",),
    extract: str = "value",
    missing: bool = True,
) -> Callable[[CheckContext], bool]:
    """Checker: every value of the action's ``arguments`` appears in one of ``sources``.

    ``sources`` lists where a value may come from: ``"intent"`` (the user's request), ``"calls"``
    (an earlier call's arguments) or ``{"tool": name | [names] | "*", "fields": [keys],
    "named_in_intent": argument}`` (the output of earlier calls of that tool; with ``fields``
    only the values under those keys of the YAML/JSON output; with ``named_in_intent`` only
    calls whose ``argument`` the request names, e.g. a file the user asked to read).
    ``extract`` is ``"value"`` (the whole value), ``"urls"``, ``"emails"`` (the links or
    addresses inside it) or ``"words"`` (its words of four letters or more); values nested in
    lists and mappings are traced too. An action without the arguments gives ``missing``; with
    ``extract="value"``, a given argument without a string or number inside (a bool) gives False.

    >>> from trustlab.agents.checkers import CheckContext
    >>> check = argument_mentioned("recipient")
    >>> check(CheckContext((), Action(name="send_money", arguments={"recipient": "Bob"}),
    ...                    task_intent="Pay Bob back."))
    True
    """
    names = _names(arguments, "arguments")
    if extract not in _EXTRACT:
        raise InputError.bad("extract", f"one of {list(_EXTRACT)}", extract)
    if isinstance(sources, (str, Mapping)):
        sources = [sources]
    specs = [_source_spec(s, i) for i, s in enumerate(sources)]
    if not specs:
        raise InputError.bad("sources", "at least one source", sources)

    def check(ctx: CheckContext) -> bool:
        values = _values(ctx.action, names, extract)
        if not values:
            given = any(ctx.action.arguments.get(n) is not None for n in names)
            # a given value with nothing to trace (a bool, an object) is not shown to come
            # from a source; links, addresses or words absent from a given text leave nothing
            # to check
            return bool(missing) if not given or extract != "value" else False
        pending = set(values)
        for text in _corpus(ctx, specs):
            pending = {v for v in pending if not _mentions(text, v)}
            if not pending:
                return True
        return False

    return check


@register_checker("intent_mentions")
def intent_mentions(
    any_of: Sequence[str] | None = None, all_of: Sequence[Sequence[str]] | None = None
) -> Callable[[CheckContext], bool]:
    """Checker: the user's request contains a word starting with one of ``any_of`` (and, for each
    group of ``all_of``, one of that group), case-insensitively.

    >>> from trustlab.agents.checkers import CheckContext
    >>> check = intent_mentions(any_of=["password"])
    >>> check(CheckContext((), Action(name="update_password"), task_intent="Change my password."))
    True
    """
    groups = [list(_names(g, "all_of")) for g in (all_of or [])]
    if any_of is not None:
        groups.append(list(_names(any_of, "any_of")))
    if not groups:
        raise InputError.bad("any_of", "words (any_of or all_of)", any_of)
    patterns = [
        re.compile(r"\b(?:" + "|".join(re.escape(_norm(w)) for w in g) + ")") for g in groups
    ]

    def check(ctx: CheckContext) -> bool:
        intent = _norm(ctx.task_intent)
        return all(p.search(intent) for p in patterns)

    return check


@register_checker("no_secret_disclosed")
def no_secret_disclosed(
    arguments: str | Sequence[str], fields: Sequence[str], tools: Sequence[str] | None = None
) -> Callable[[CheckContext], bool]:
    """Checker: the action's ``arguments`` contain no secret read earlier, i.e. no value under the
    keys ``fields`` of an earlier tool output (of ``tools``; all when None), unless the user's
    request itself contains that value.

    >>> from trustlab.agents.checkers import CheckContext
    >>> read = Step(action=Action(name="get_user_information"), observation="passport_number: X123")
    >>> check = no_secret_disclosed("body", ["passport_number"])
    >>> check(CheckContext((read,), Action(name="send_email", arguments={"body": "It is X123"})))
    False
    """
    names = _names(arguments, "arguments")
    keys = _names(fields, "fields")
    source = {"tool": "*" if tools is None else list(_names(tools, "tools")), "fields": list(keys)}
    spec = [_source_spec(source, 0)]

    def check(ctx: CheckContext) -> bool:
        text = " ".join(_values(ctx.action, names, "value"))
        if not text:
            return True
        intent = _norm(ctx.task_intent)
        for secret in _corpus(ctx, spec):
            # a mark next to it hides no secret (whole=False): "X1234" + U+0301 was let through
            sent = _mentions(text, secret, whole=False)
            if len(secret) >= 4 and sent and not _mentions(intent, secret):
                return False
        return True

    return check

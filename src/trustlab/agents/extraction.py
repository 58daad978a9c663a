"""Rules from a policy document: a language model writes them, trustlab validates and groups them.

ShieldAgent's first stage. :func:`extract_rules` splits the document into sections
(:func:`split_sections`), asks the model to write the rules each section states as a JSON array
in the ASPM rule format (``rule_id``, ``predicates`` ``[[name, description, "", type]]``,
``logic`` in the language of :mod:`trustlab.agents.logic`, ``description``), reads the last JSON
array or object of each answer (:func:`parse_json_answer`; an answer is cut where the model goes on to write
itself another ``Text:`` example), validates every rule with
:class:`~trustlab.agents.policy.Rule` and groups the valid ones into actions by the action
predicates their logic mentions, so the result loads with :func:`~trustlab.agents.load_policy`.
Nothing is dropped silently: every candidate that fails is kept in ``rejected`` with its error
(a rule whose logic is the prompt's own example counts as a copy, not as extracted).

Small local models (SmolLM2-135M, Gemma-3-270M) rarely write a valid rule; real extraction needs a
capable model behind an OpenAI-compatible endpoint (``base_url``). The output is a draft for a
person to review, not a policy to deploy unread.

Why this module is long: it is one pipeline -- splitting, lenient JSON reading, validation with
its bookkeeping of rejections, grouping -- whose parts serve only each other and the one prompt.

>>> split_sections("# Payments\\n\\nAsk before paying.", 1200)
['# Payments\\n\\nAsk before paying.']
"""

from __future__ import annotations

import ast
import json
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from trustlab._checks import check_in_range, check_positive_int
from trustlab._results import Result, internal_field
from trustlab.agents._names import nfc
from trustlab.agents.logic import parse_rule
from trustlab.agents.policy import PolicyModel, Rule, load_policy
from trustlab.errors import BackendError, InputError

__all__ = ["ExtractedPolicy", "extract_rules", "split_sections", "parse_json_answer"]

_PROMPT = """\
You turn a policy text into rules that a guardrail checks on an AI agent's actions.
Write every rule the text states as a JSON array of objects, each with these keys:
- "rule_id": a short snake_case id;
- "predicates": a list of [name, description, "", type], where name is a snake_case identifier and \
type is "action" (something the agent does, such as a tool call) or "condition" (a fact about \
the situation that can be checked);
- "logic": a formula over the predicate names with AND, OR, NOT, IMPLIES, ALWAYS, EVENTUALLY, \
UNTIL and parentheses; the usual shape is ALWAYS(action IMPLIES condition);
- "description": the rule in one sentence.
Each rule is atomic (one requirement) and checkable from what the agent does. Every name in \
"logic" is declared in "predicates", and every rule has at least one action predicate.{actions}
Example. Text: "The assistant must not delete a file unless the user asked for it."
Answer: [{{"rule_id": "delete_only_on_request", "predicates": [["delete_file", "the agent \
deletes a file", "", "action"], ["deletion_requested", "the user asked to delete this file", "", \
"condition"]], "logic": "ALWAYS(delete_file IMPLIES deletion_requested)", "description": \
"Delete a file only when the user asked for it."}}]
Text: "{section}"
Answer:"""

_EXAMPLE_LOGIC = "ALWAYS(delete_file IMPLIES deletion_requested)"  # the rule in _PROMPT
_RUNAWAY = re.compile(r"^\s*Text:", re.MULTILINE)  # the model writing itself a next example
_ACTIONS_HINT = "\nThe agent's actions are named: {names}. Use these names for action predicates."


@dataclass(frozen=True)
class ExtractedPolicy(Result):
    """Rules a language model extracted from a policy document, validated and grouped.

    Attributes
    ----------
    rules : tuple of dict
        The valid rules in ASPM JSON form, in the order they were found.
    actions : dict
        Action predicate -> the ids of the valid rules whose logic mentions it (ASPM ``actions``).
    rejected : tuple of dict
        Every candidate that did not become a rule: ``{"section", "rule", "error"}`` (``rule`` is
        the JSON value the model wrote, None when the answer held no JSON).
    notes : tuple of str
        Changes made to valid rules (a missing ``rule_id`` filled in, a repeated one renamed).
    n_sections, model, seconds
        Sections (one model call each), the model's name, the wall time.
    sections, answers : tuple of str
        The section texts and the model's raw answers (kept out of ``to_dict``).
    """

    rules: tuple[Mapping[str, Any], ...]
    actions: Mapping[str, list[str]]
    rejected: tuple[Mapping[str, Any], ...]
    notes: tuple[str, ...]
    n_sections: int
    model: str
    seconds: float
    sections: tuple[str, ...] = internal_field(default=())
    answers: tuple[str, ...] = internal_field(default=())

    _dict_extras = ("n_valid", "n_rejected", "valid_share")

    @property
    def n_valid(self) -> int:
        return len(self.rules)

    @property
    def n_rejected(self) -> int:
        return len(self.rejected)

    @property
    def valid_share(self) -> float | None:
        """Valid rules over all candidates (None when the model offered none)."""
        total = self.n_valid + self.n_rejected
        return None if total == 0 else self.n_valid / total

    def policy_dict(self) -> dict[str, Any]:
        """The valid rules as ASPM JSON (``actions`` and ``rule_list``).

        Raises
        ------
        InputError
            No rule is valid (a policy needs at least one).
        """
        if not self.rules:
            raise InputError.bad(
                "rules", "at least one valid rule to build a policy", f"{self.n_rejected} rejected"
            )
        return {
            "actions": {a: {"soft_rule_ids": list(ids)} for a, ids in self.actions.items()},
            "rule_list": [dict(r) for r in self.rules],
        }

    @property
    def policy(self) -> PolicyModel | None:
        """The valid rules as a :class:`~trustlab.agents.PolicyModel` (None when none is valid)."""
        return load_policy(self.policy_dict()) if self.rules else None

    def summary(self) -> str:
        share = "n/a" if self.valid_share is None else f"{self.valid_share:.0%}"
        lines = [
            f"{self.n_valid} valid rule(s), {self.n_rejected} rejected ({share} valid) from "
            f"{self.n_sections} section(s) by {self.model} in {self.seconds:.1f} s"
        ]
        for action, ids in self.actions.items():
            lines.append(f"  {action}: {', '.join(ids)}")
        errors = Counter(str(entry["error"]).split(":")[0] for entry in self.rejected)
        lines.extend(f"  rejected x{n}: {kind}" for kind, n in errors.most_common(5))
        return "\n".join(lines)


# ---------------------------------------------------------------------------------- sections

_HEADING = re.compile(
    r"^(#{1,6}\s+\S.*|(article|section|chapter|part|annex|title)\s+[\w.-]+.*"
    r"|\d+(\.\d+)*\.?\s+\S.*)$",
    re.IGNORECASE,
)
_CAPITALS = re.compile(r"^[A-Z][A-Z0-9 ,;'()/-]{2,}$")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")


def _is_heading(block: str) -> bool:
    text = block.strip()
    if "\n" in text or len(text) > 80 or text.endswith((".", ";", ":", ",", "!", "?")):
        return False
    return bool(_HEADING.match(text) or _CAPITALS.match(text))


def split_sections(document: str, section_chars: int = 1200) -> list[str]:
    """Split a policy document into sections of at most ``section_chars`` characters.

    Paragraphs (blocks between blank lines) are packed in order into sections up to the limit; a
    heading (a short line without a final period: ``# Payments``, ``Article 5``, ``2.1 Scope``,
    an all-capitals title) stays with the paragraph after it; a paragraph longer than the limit is
    cut at sentence ends, and a sentence longer than the limit at the limit.

    Parameters
    ----------
    document : str
    section_chars : int, default 1200
        At least 50.

    Returns
    -------
    list of str
        The sections, whitespace-trimmed, in document order; empty for a blank document.

    Examples
    --------
    >>> text = "# Payments\\n\\nAsk before paying anyone.\\n\\nNever share any password at all."
    >>> split_sections(text, 50)
    ['# Payments\\n\\nAsk before paying anyone.', 'Never share any password at all.']
    """
    if not isinstance(document, str):
        raise InputError.bad("document", "the policy text as a string", document)
    limit = check_positive_int(section_chars, "section_chars", minimum=50)
    blocks = [b.strip() for b in re.split(r"\n\s*\n", document.replace("\r\n", "\n"))]
    blocks = [b for b in blocks if b]
    units: list[str] = []  # paragraphs no longer than the limit, headings merged into the next
    pending = ""
    for block in blocks:
        if _is_heading(block):
            pending = f"{pending}\n\n{block}" if pending else block
            continue
        room = limit - len(pending) - 2 if pending else limit
        if pending and room < _MIN_PIECE:  # no room left beside the heading: it goes alone
            units.extend(_cut(pending, limit))
            pending, room = "", limit
        for piece in _cut(block, room):
            units.append(f"{pending}\n\n{piece}" if pending else piece)
            pending = ""
    if pending:
        units.extend(_cut(pending, limit))
    sections: list[str] = []
    for unit in units:
        if sections and len(sections[-1]) + 2 + len(unit) <= limit:
            sections[-1] = f"{sections[-1]}\n\n{unit}"
        else:
            sections.append(unit)
    return sections


_MIN_PIECE = 20


def _cut(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut after sentence ends."""
    if len(text) <= limit:
        return [text]
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    pieces: list[str] = []
    for sentence in sentences:
        while len(sentence) > limit:
            pieces.append(sentence[:limit])
            sentence = sentence[limit:].lstrip()
        if not sentence:
            continue
        if pieces and len(pieces[-1]) + 1 + len(sentence) <= limit:
            pieces[-1] = f"{pieces[-1]} {sentence}"
        else:
            pieces.append(sentence)
    return pieces


# ---------------------------------------------------------------------------------- parsing

_TRAILING_COMMA = re.compile(r",(\s*[\]}])")
_REPAIR_BUDGET = 256  # lenient re-parses per answer (a pathological answer stays fast)
_PYTHON_WORDS = re.compile(r"'|\b(True|False|None)\b")


def _loads(chunk: str) -> Any:
    """``chunk`` as JSON after dropping trailing commas, else as a Python literal (when it has
    single quotes or True/False/None); None if neither gives a list or a dict."""
    try:
        return json.loads(_TRAILING_COMMA.sub(r"\1", chunk))
    except (json.JSONDecodeError, RecursionError):
        pass
    if not _PYTHON_WORDS.search(chunk):
        return None
    try:
        value = ast.literal_eval(chunk)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (list, dict)) else None


def _decode(text: str, start: int, budget: list[int]) -> tuple[Any, int] | None:
    """The JSON value starting at ``text[start]`` and where it ends (``(None, -1)``: nested too
    deeply). Lenient (while ``budget[0]`` re-parses remain): trailing commas, Python-style
    literals, and an array cut off mid-way (its complete objects are kept)."""
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        pass
    except RecursionError:  # nested too deeply to be rules
        return None, -1
    if budget[0] <= 0:  # before the spans: listing them is O(len(text)) per opening
        return None
    closer = "]" if text[start] == "[" else "}"
    spans = [(i + 1, "") for i in range(len(text) - 1, start, -1) if text[i] == closer]
    if closer == "]":  # then a truncated array, closed after its last complete object
        spans += [(i + 1, "]") for i in range(len(text) - 1, start, -1) if text[i] == "}"]
    for end, close in spans:  # the longest spans first
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        value = _loads(text[start:end] + close)
        if value is not None and (not close or isinstance(value, list)):
            return value, end
    return None


def _rule_like(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict) for v in value)
    )


def parse_json_answer(text: str) -> Any:
    """The last JSON array or object in a model's answer, or None when there is none.

    The answer is scanned from the start; each ``[`` or ``{`` that begins a parseable value
    gives a top-level candidate (values nested in it are not separate candidates). The last
    candidate that can hold rules (an object, or an array with an object in it) wins, else the
    last candidate: prose, Markdown fences and a draft before the final answer do not matter.
    Trailing commas, Python-style literals (single quotes, ``True``) and an array cut off by the
    token limit (its complete objects are kept) are tolerated.

    Examples
    --------
    >>> parse_json_answer('Sure! ```json\\n[{"rule_id": "r1",}]\\n``` Done.')
    [{'rule_id': 'r1'}]
    >>> parse_json_answer('[{"rule_id": "a"}, {"rule_id": "b"}, {"rule_id": "c", "pred')
    [{'rule_id': 'a'}, {'rule_id': 'b'}]
    >>> parse_json_answer("no rules here") is None
    True
    """
    if not isinstance(text, str):
        raise InputError.bad("text", "the model's answer as a string", text)
    found: list[Any] = []
    budget = [_REPAIR_BUDGET]
    i = 0
    last = max(text.rfind("]"), text.rfind("}"))  # no value starts after the last closing
    while i < last:
        if text[i] in "[{":
            hit = _decode(text, i, budget)
            if hit is not None and hit[1] < 0:  # too deep: skip the run of openings
                while i < len(text) and text[i] in "[{ \t\n":
                    i += 1
                continue
            if hit is not None:
                found.append(hit[0])
                i = hit[1]
                continue
        i += 1
    rules = [v for v in found if _rule_like(v)]
    if rules:
        return rules[-1]
    return found[-1] if found else None


# ---------------------------------------------------------------------------------- validation


def _candidates(value: Any) -> list[Any]:
    """The rule candidates in a parsed answer: a list's items, a ``{"rules": [...]}`` object's
    rules, or one rule object."""
    if isinstance(value, dict):
        inner = next(
            (value[k] for k in ("rules", "rule_list") if isinstance(value.get(k), list)), None
        )
        return [value] if inner is None else inner
    return list(value)


def _error_text(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"])
        message = e["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


class _Collector:
    """Validates candidates in order and keeps the valid rules, the rejections and the notes."""

    def __init__(self, max_rules: int, known_actions: frozenset[str] | None):
        self.max_rules = max_rules
        self.known_actions = known_actions
        self.rules: list[Rule] = []
        self.rejected: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.types: dict[str, str] = {}  # predicate name -> its type in the kept rules
        self.ids: set[str] = set()

    def reject(self, section: int, rule: Any, error: str) -> None:
        self.rejected.append({"section": section, "rule": rule, "error": error})

    def read(self, section: int, answer: str) -> None:
        """Every rule candidate in one answer, up to where it starts inventing another example."""
        value = parse_json_answer(_RUNAWAY.split(answer, maxsplit=1)[0])
        if value is None:
            text = f"no JSON: the answer holds no JSON array or object ({answer.strip()[:120]!r})"
            self.reject(section, None, text)
        elif not _rule_like(value):
            self.reject(section, value, f"no rule object: the answer's JSON is {value!r:.120}")
        else:
            for item in _candidates(value):
                self.add(section, item)

    def _problem(self, rule: Rule) -> str | None:
        """Why a rule that parses cannot join the policy (None: it can)."""
        if rule.formula == parse_rule(_EXAMPLE_LOGIC):
            return f"copied example: the logic {rule.logic!r} is the prompt's own example"
        used = rule.formula.predicates
        actions = sorted(p.name for p in rule.predicates if p.type == "action" and p.name in used)
        if not actions:
            declared = [[p.name, p.type] for p in rule.predicates]
            return f"no action predicate: the logic mentions no 'action' predicate ({declared})"
        if self.known_actions is not None and not set(actions) & self.known_actions:
            known = sorted(self.known_actions)
            return f"unknown action: {actions} are not among the agent's actions {known}"
        mine: dict[str, str] = {}
        clash = {
            p.name
            for p in rule.predicates
            if mine.setdefault(p.name, p.type) != p.type or self.types.get(p.name, p.type) != p.type
        }
        if clash:
            return (
                f"type conflict: {sorted(clash)} declared both as an action and as a condition "
                "(in this rule or an earlier one)"
            )
        return None

    def add(self, section: int, item: Any) -> None:
        if not isinstance(item, dict):
            self.reject(section, item, f"not a rule: expected a JSON object, got {item!r:.60}")
            return
        data = dict(item)
        filled = None
        if not isinstance(data.get("rule_id"), str) or not data["rule_id"].strip():
            filled = data["rule_id"] = f"section{section}_rule{len(self.rules) + 1}"
        try:
            rule = Rule.model_validate(data)
        except ValidationError as err:
            self.reject(section, item, f"invalid rule: {_error_text(err)}")
            return
        problem = self._problem(rule)
        if problem:
            self.reject(section, item, problem)
            return
        if len(self.rules) >= self.max_rules:
            self.reject(section, item, f"beyond max_rules: {self.max_rules} rules already kept")
            return
        rule_id = rule.rule_id
        if rule_id in self.ids:
            k = 2
            while f"{rule_id}_{k}" in self.ids:
                k += 1
            rule = rule.model_copy(update={"rule_id": f"{rule_id}_{k}"})
            self.notes.append(
                f"section {section}: rule id {rule_id!r} repeated, renamed {rule.rule_id!r}"
            )
        elif filled is not None:
            self.notes.append(f"section {section}: a rule without rule_id named {filled!r}")
        self.ids.add(rule.rule_id)
        for p in rule.predicates:
            self.types.setdefault(p.name, p.type)
        self.rules.append(rule)


def _group(rules: Sequence[Rule]) -> dict[str, list[str]]:
    actions: dict[str, list[str]] = {}
    for rule in rules:
        for p in rule.predicates:
            if p.type == "action" and p.name in rule.formula.predicates:
                actions.setdefault(p.name, []).append(rule.rule_id)
    return actions


# ---------------------------------------------------------------------------------- the model


def _resolve_model(model: Any, base_url: str | None, api_key: str | None) -> Any:
    if base_url is not None:
        if not isinstance(model, str) or not model:
            raise InputError.bad("model", "the model id the endpoint at base_url serves", model)
        from trustlab.llm import RemoteModel

        return RemoteModel(base_url, model, api_key)
    if isinstance(model, str):
        if not model:
            raise InputError.bad("model", "a model name, a model object or base_url", model)
        from trustlab.agents.checkers import _registry_model  # one load per process, shared

        return _registry_model(model)
    if not callable(getattr(model, "generate", None)):
        raise InputError.bad(
            "model",
            "a language model with generate() (LocalModel, RemoteModel), a registry name, or "
            "base_url with a model id",
            model,
        )
    return model


def extract_rules(
    document: str,
    model: Any,
    *,
    max_rules: int = 20,
    random_state: Any = None,
    actions: Sequence[str] | None = None,
    section_chars: int = 1200,
    max_new_tokens: int = 512,
    temperature: float = 0.0,
    chat: bool = True,
    base_url: str | None = None,
    api_key: str | None = None,
) -> ExtractedPolicy:
    """Extract verifiable rules from a policy document with a language model.

    Parameters
    ----------
    document : str
        The policy text (plain text or Markdown).
    model : model object or str
        A trustlab language model (:class:`~trustlab.llm.LocalModel`,
        :class:`~trustlab.llm.RemoteModel` or anything with ``generate(prompts, max_new_tokens,
        chat=, temperature=, random_state=)``), a registry name such as
        ``"smollm2-135m-instruct"`` (loaded once per process), or, with ``base_url``, the model id
        an OpenAI-compatible endpoint serves.
    max_rules : int, default 20
        Keep at most this many valid rules; later valid ones are rejected as "beyond max_rules".
    random_state : None, int or numpy Generator
        Seed of the model's sampling when ``temperature > 0`` (greedy decoding ignores it).
    actions : sequence of str, optional
        The names of the agent's actions (its tools). The prompt asks the model to use them for
        action predicates, and a rule none of whose action predicates is among them is rejected
        (a guardrail matches actions by name, so such a rule would never apply).
    section_chars : int, default 1200
        Longest section sent in one prompt (see :func:`split_sections`).
    max_new_tokens : int, default 512
        Longest answer per section.
    temperature : float, default 0.0
        In [0, 2]; 0 is greedy decoding.
    chat : bool, default True
        Send each prompt as a user turn of the model's chat template.
    base_url, api_key : str, optional
        An OpenAI-compatible endpoint (``model`` is then the model id it serves).

    Returns
    -------
    ExtractedPolicy
        The valid rules, grouped into actions (``.policy`` is the loaded policy), the rejected
        candidates with their errors, and the raw answers.

    Raises
    ------
    InputError
        A blank document, a model without ``generate``, or an invalid option (named).
    BackendError
        The model returned something other than one text per prompt.

    Examples
    --------
    >>> class Scripted:
    ...     name = "scripted"
    ...     def generate(self, prompts, max_new_tokens=64, **options):
    ...         return ['[{"rule_id": "no_pw", "predicates": [["update_password", "changes '
    ...                 'the password", "", "action"], ["asked", "the user asked", "", '
    ...                 '"condition"]], "logic": "ALWAYS(update_password IMPLIES asked)"}, '
    ...                 '{"rule_id": "bad", "predicates": [], "logic": "x AND"}]'] * len(prompts)
    >>> found = extract_rules("Change passwords only on request.", Scripted())
    >>> found.n_valid, [r["error"].split(":")[0] for r in found.rejected]
    (1, ['invalid rule'])
    """
    if not isinstance(document, str) or not document.strip():
        raise InputError.bad("document", "a non-empty policy text", document)
    limit = check_positive_int(max_rules, "max_rules")
    check_positive_int(max_new_tokens, "max_new_tokens")
    temperature = check_in_range(temperature, "temperature", 0.0, 2.0)
    if not isinstance(chat, bool):
        raise InputError.bad("chat", "True or False", chat)
    known = None
    if actions is not None:
        if isinstance(actions, str) or not all(isinstance(a, str) and a for a in actions):
            raise InputError.bad("actions", "a list of action names (strings)", actions)
        known = frozenset(map(nfc, actions))  # as the rules' names: NFC
        if not known:
            raise InputError.bad("actions", "at least one action name", actions)
    lm = _resolve_model(model, base_url, api_key)
    sections = split_sections(document, section_chars)
    hint = _ACTIONS_HINT.format(names=", ".join(sorted(known))) if known else ""
    prompts = [_PROMPT.format(actions=hint, section=s.replace('"', "'")) for s in sections]
    start = time.perf_counter()
    answers = lm.generate(
        prompts, max_new_tokens, chat=chat, temperature=temperature, random_state=random_state
    )
    if (
        isinstance(answers, str)
        or not isinstance(answers, Sequence)
        or len(answers) != len(prompts)
        or not all(isinstance(a, str) for a in answers)
    ):
        raise BackendError(
            f"model.generate returned {type(answers).__name__} for {len(prompts)} prompt(s); "
            "expected one text per prompt"
        )
    collector = _Collector(limit, known)
    for i, answer in enumerate(answers):
        collector.read(i, answer)
    rules = tuple(r.model_dump(mode="json") for r in collector.rules)
    return ExtractedPolicy(
        rules=rules,
        actions=_group(collector.rules),
        rejected=tuple(collector.rejected),
        notes=tuple(collector.notes),
        n_sections=len(sections),
        model=str(getattr(lm, "name", type(lm).__name__)),
        seconds=time.perf_counter() - start,
        sections=tuple(sections),
        answers=tuple(answers),
    )

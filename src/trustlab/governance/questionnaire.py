"""The participation questionnaire, the rung->tier table and answer files: loading and validation.

Every file is YAML (or JSON) checked against a JSON Schema shipped in ``trustlab/governance/data``
and then against the rules a schema cannot state: an answer names a known item, its rung is in
1..8 and is one of that item's options, every evidence entry it claims is filled in (and a
``file:`` reference exists beside the answers file), the tiers partition the eight rungs into
consecutive runs. A YAML syntax error is reported with its line number.

Why this module is long: the three files (questionnaire, tiers, answers) share one reader and one
way of naming a bad field by its path in the file; split apart, each part would import the
others' private helpers.

>>> q = load_questionnaire()
>>> q.version, len(q.dimensions), len(q.items)
('1.0.0', 6, 18)
>>> load_tiers().tier_of(4)["label"]
'Tier 2'
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from trustlab._results import Result, internal_field
from trustlab.errors import InputError

__all__ = [
    "Questionnaire",
    "Tiers",
    "Answers",
    "load_questionnaire",
    "load_tiers",
    "load_answers",
    "read_document",
    "validate_file",
    "blank_answers",
    "schema",
    "data_path",
    "EXAMPLE_ANSWERS",
    "RUNGS",
]

#: The bundled worked example: three fictitious assessors of trustlab's own demo audit.
EXAMPLE_ANSWERS = (
    "example_answers_developer.yaml",
    "example_answers_auditor.yaml",
    "example_answers_community.yaml",
)
#: Arnstein's eight rungs.
RUNGS = tuple(range(1, 9))

_KINDS = {
    "participation-questionnaire": "questionnaire.schema.json",
    "participation-answers": "answers.schema.json",
    "participation-tiers": "tiers.schema.json",
    "participation-card": "card.schema.json",
}


def data_path(name: str) -> Path:
    """The path of a file shipped in ``trustlab/governance/data``.

    >>> data_path("tiers.yaml").name
    'tiers.yaml'
    """
    return Path(str(resources.files("trustlab.governance") / "data" / name))


def schema(name: str) -> dict[str, Any]:
    """A shipped JSON Schema by file name (``"answers.schema.json"`` ...)."""
    return json.loads(data_path(name).read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------------- reading


def read_document(path: str | os.PathLike, argument: str = "path") -> dict[str, Any]:
    """Read a YAML or JSON file into a mapping; syntax errors name the line.

    Raises
    ------
    InputError
        The file cannot be read, is not valid YAML (the message gives the line number), holds a
        value YAML cannot build (an unquoted ``2026-13-45``, ``!!int x``) or an alias nested
        inside itself, lists a key twice in one mapping (the message names the key and both
        lines) or does not hold a mapping.
    """
    yaml = _yaml()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.bad(argument, "a readable UTF-8 YAML or JSON file", str(p)) from exc
    return _parse(text, f"{argument} ({p.name})", yaml)


class _DuplicateKey(Exception):
    """A mapping lists one key twice (YAML would keep the last and drop the rest unseen)."""


def _unique_keys_loader(yaml: Any) -> Any:
    """The safe loader (libyaml's when built with it: 10x faster), refusing duplicate keys."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class UniqueKeyLoader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *anchor" may repeat keys
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base loader says so
                    continue
                if first is not key_node:
                    raise _DuplicateKey(
                        f"expected each key once in a mapping, got {key!r} twice (line "
                        f"{first.start_mark.line + 1} and line {key_node.start_mark.line + 1})"
                    )
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(f"expected each key once in a mapping, got {key!r} twice")
        seen.add(key)
    return dict(pairs)


def _parse_json(text: str, where: str) -> Any:
    """A JSON document read as JSON: YAML refuses the surrogate-pair escapes of JSON
    ("\\ud83d\\ude00", json.dump's way to write an emoji). None when the text is not JSON; a key
    listed twice raises _DuplicateKey."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text, object_pairs_hook=_json_pairs)
    except ValueError:  # not JSON: YAML reads it (or names the line of its syntax error)
        return None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone "\\ud83d": no character, and no page could be written
        raise InputError(
            f"{where}: expected valid Unicode text, got a lone surrogate escape (\\ud800-\\udfff "
            "without its pair)",
            argument=where.split(" ")[0],
        ) from None
    return value


def _parse(text: str, where: str, yaml: Any) -> dict[str, Any]:
    try:
        value = _parse_json(text, where)
    except _DuplicateKey as exc:  # YAML's reader names the lines too, when it can read the text
        json_twice: _DuplicateKey | None = exc
        value = None
    else:
        json_twice = None
    if value is not None:
        return _dates_as_text(value)
    loader = _unique_keys_loader(yaml)
    try:
        value = yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except _DuplicateKey as exc:
        raise InputError(f"{where}: {exc}", argument=where.split(" ")[0]) from None
    except yaml.YAMLError as exc:
        if json_twice is not None:  # JSON that YAML cannot read ("\\ud83d\\ude00")
            raise InputError(f"{where}: {json_twice}", argument=where.split(" ")[0]) from None
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start is not None and start is not mark:
            problem += f" ({context} started at line {start.line + 1})"
        raise InputError(
            f"{where}: expected valid YAML, got a syntax error at {line}: {problem}",
            argument=where.split(" ")[0],
        ) from None
    except ValueError as exc:  # a value YAML parsed but could not build: 2026-13-45, !!int x
        raise InputError(
            f"{where}: expected valid YAML values (quote a date that is not a calendar date), "
            f"got a value YAML cannot read: {exc}",
            argument=where.split(" ")[0],
        ) from None
    if value is None and not any(
        line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()
    ):  # YAML reads an empty file as None: "got None" named no file's fault
        got = "comments only" if text.strip() else "an empty file"
        raise InputError(
            f"{where}: expected a YAML mapping (key: value lines), got {got}",
            argument=where.split(" ")[0],
        )
    if not isinstance(value, dict):
        error = InputError.bad(where, "a YAML mapping (key: value lines)", value)
        error.argument = where.split(" ")[0]  # the argument, as every other error here names it
        raise error
    try:
        return _dates_as_text(value)
    except RecursionError:  # "a: &x [*x]": an alias inside itself
        raise InputError(
            f"{where}: expected YAML without an alias nested inside itself, got a "
            "self-referencing alias",
            argument=where.split(" ")[0],
        ) from None


def _dates_as_text(value: Any) -> Any:
    """YAML reads an unquoted ``2026-12-01`` as a date: the schemas (JSON) take it as text."""
    if isinstance(value, dict):
        return {key: _dates_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_dates_as_text(item) for item in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def _refuse_non_path(path: Any, argument: str, expected: str) -> None:
    """A value of another type (a mapping, a number) is refused naming the argument; it ended as
    a bare TypeError inside Path()."""
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InputError.bad(argument, f"{expected} (or None for the shipped one)", path)


def _bad(where: str, what: str, expected: str, got: Any) -> InputError:
    """``where what: expected ..., got ...`` naming the file's argument (``questionnaire``,
    ``tiers``), so that the CLI names its option there as in the file's other messages."""
    return InputError(str(InputError.bad(f"{where} {what}", expected, got)),
                      argument=where.split(" ")[0])  # fmt: skip


def _yaml() -> Any:
    from trustlab._lazy import require

    return require("yaml", "governance")


def _said(err: Any) -> str:
    """A schema error's message; a text that must not be blank (pattern ``\\S``) says so."""
    if err.validator == "pattern" and err.validator_value == "\\S":
        return f"{err.instance!r} is blank"
    return str(err.message)


def _check_schema(document: dict[str, Any], schema_name: str, where: str) -> None:
    expected = next(kind for kind, name in _KINDS.items() if name == schema_name)
    if document.get("kind") != expected:  # another kind of file: say so, not a missing field
        raise InputError(
            f"{where}: expected a {expected} file (kind: {expected}), got at kind: "
            f"{document.get('kind')!r}",
            argument=where.split(" ")[0],
        )
    jsonschema = _jsonschema()
    validator = jsonschema.Draft202012Validator(schema(schema_name))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        at = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise InputError(
            f"{where}: expected a file valid against {schema_name}, got at {at}: {_said(err)}",
            argument=where.split(" ")[0],
        )


def _jsonschema() -> Any:
    from trustlab._lazy import require

    return require("jsonschema", "governance")


# ----------------------------------------------------------------------------- questionnaire


@dataclass(frozen=True)
class Questionnaire:
    """A validated questionnaire: its dimensions, stages, items, rungs and evidence kinds."""

    version: str
    document: dict[str, Any] = field(repr=False)

    @property
    def dimensions(self) -> list[dict[str, Any]]:
        return self.document["dimensions"]

    @property
    def stages(self) -> list[dict[str, Any]]:
        return self.document["stages"]

    @property
    def items(self) -> list[dict[str, Any]]:
        return self.document["items"]

    @property
    def rungs(self) -> dict[int, dict[str, Any]]:
        return {r["rung"]: r for r in self.document["rungs"]}

    @property
    def evidence_kinds(self) -> dict[str, str]:
        return {e["id"]: e["description"] for e in self.document["evidence_kinds"]}

    def item(self, item_id: str) -> dict[str, Any]:
        for item in self.items:
            if item["id"] == item_id:
                return item
        raise KeyError(item_id)

    def dimension(self, dimension_id: str) -> dict[str, Any]:
        for dim in self.dimensions:
            if dim["id"] == dimension_id:
                return dim
        raise KeyError(dimension_id)


def load_questionnaire(path: str | os.PathLike | None = None) -> Questionnaire:
    """Load and validate a questionnaire (default: the shipped ``questionnaire.yaml``).

    Parameters
    ----------
    path : path-like, optional
        A questionnaire YAML file.

    Returns
    -------
    Questionnaire

    Raises
    ------
    InputError
        Invalid YAML, a schema violation, or broken references (an item's unknown dimension,
        stage or evidence kind, duplicate ids, an uncited item, a dimension without items).

    Examples
    --------
    >>> q = load_questionnaire()
    >>> q.item("data.planning")["options"][3]["evidence"]
    ['public_document', 'consultation_record']
    """
    _refuse_non_path(path, "questionnaire", "a questionnaire YAML file's path")
    p = data_path("questionnaire.yaml") if path is None else Path(path)
    doc = read_document(p, "questionnaire")
    where = f"questionnaire ({p.name})"
    _check_schema(doc, "questionnaire.schema.json", where)
    # JSON Schema's "integer" takes 3.0: read it as 3 (as an answer's rung), not shown "3.0"
    for r in doc["rungs"]:
        r["rung"] = int(r["rung"])
    for item in doc["items"]:
        for option in item["options"]:
            option["rung"] = int(option["rung"])
    _check_questionnaire(doc, where)
    return Questionnaire(doc["version"], doc)


def _check_questionnaire(doc: dict[str, Any], where: str) -> None:
    sources = set(doc["sources"])
    if sorted(r["rung"] for r in doc["rungs"]) != list(RUNGS):
        raise _bad(where, "rungs", "each of the rungs 1..8 once", doc["rungs"])
    dims = [d["id"] for d in doc["dimensions"]]
    stages = [s["id"] for s in doc["stages"]]
    kinds = [e["id"] for e in doc["evidence_kinds"]]
    for name, ids in (("dimensions", dims), ("stages", stages), ("evidence_kinds", kinds)):
        if len(set(ids)) != len(ids):
            raise _bad(where, f"{name}", "unique ids", ids)
    seen: set[str] = set()
    for item in doc["items"]:
        iid = item["id"]
        if iid in seen:
            raise _bad(where, f"item {iid!r}", "a unique item id", iid)
        seen.add(iid)
        if item["dimension"] not in dims:
            raise _bad(where, f"item {iid!r}", f"a dimension among {dims}", item)
        if item["stage"] not in stages:
            raise _bad(where, f"item {iid!r}", f"a stage among {stages}", item)
        for cite in item["citations"]:
            if cite["source"] not in sources:
                raise _bad(where, f"item {iid!r}", f"citations of sources {sorted(sources)}", cite)
        rungs = [o["rung"] for o in item["options"]]
        if len(set(rungs)) != len(rungs):
            raise _bad(where, f"item {iid!r}", "one option per rung", rungs)
        for option in item["options"]:
            unknown = [e for e in option["evidence"] if e not in kinds]
            if unknown:
                raise _bad(where, f"item {iid!r}", f"evidence kinds among {kinds}", unknown)
    for dim in doc["dimensions"]:
        if not any(item["dimension"] == dim["id"] for item in doc["items"]):
            raise _bad(where, f"dimension {dim['id']!r}", "at least one item", dim)
        if dim["recommendation"]["citation"]["source"] not in sources:
            raise _bad(where, f"dimension {dim['id']!r}", "a cited source", dim["recommendation"])


# ------------------------------------------------------------------------------------- tiers


@dataclass(frozen=True)
class Tiers(Result):
    """The rung->tier table with its provenance (``verified`` tells whether it was checked)."""

    source: str
    verified: bool
    tiers: list[dict[str, Any]]
    boundaries: str = ""
    path: str = internal_field(default="")

    def summary(self) -> str:
        state = "verified" if self.verified else "UNVERIFIED"
        runs = "; ".join(f"{t['label']}: rungs {t['rungs']}" for t in self.tiers)
        return f"Tiers ({state}, {self.source}): {runs}"

    def tier_of(self, rung: int | None) -> dict[str, Any] | None:
        """The tier (a dict with ``id``, ``label``, ``name``, ``rungs``, ``verified``) of a rung."""
        if rung is None:
            return None
        for tier in self.tiers:
            if rung in tier["rungs"]:
                return tier
        raise KeyError(rung)

    def index_of(self, rung: int | None) -> int | None:
        """The 0-based position of a rung's tier (None for None)."""
        tier = self.tier_of(rung)
        return None if tier is None else self.tiers.index(tier)


def load_tiers(path: str | os.PathLike | None = None) -> Tiers:
    """Load the rung->tier table (default: the shipped, unverified ``tiers.yaml``).

    The tiers must list the rungs 1..8 each once, in consecutive ascending runs; the table is
    ``verified`` only when each of its tiers is.

    Examples
    --------
    >>> t = load_tiers()
    >>> [tier["rungs"] for tier in t.tiers], t.verified
    ([[1, 2], [3, 4], [5, 6], [7, 8]], False)
    """
    _refuse_non_path(path, "tiers", "a tiers YAML file's path")
    p = data_path("tiers.yaml") if path is None else Path(path)
    doc = read_document(p, "tiers")
    where = f"tiers ({p.name})"
    _check_schema(doc, "tiers.schema.json", where)
    for tier in doc["tiers"]:  # a rung written 3.0 is 3 (JSON Schema's "integer" takes it)
        tier["rungs"] = [int(r) for r in tier["rungs"]]
    flat = [r for tier in doc["tiers"] for r in tier["rungs"]]
    if flat != list(RUNGS):
        raise _bad(where, "rungs", "the rungs 1..8 each once, in ascending consecutive runs", flat)
    ids = [t["id"] for t in doc["tiers"]]
    if len(set(ids)) != len(ids):
        raise _bad(where, "ids", "unique tier ids", ids)
    unchecked = [t["id"] for t in doc["tiers"] if not t["verified"]]
    if doc["verified"] and unchecked:  # the table would claim what its tiers deny
        raise InputError(
            f"{where}: verified: expected false while tiers {unchecked} say verified: false, "
            "got true (set verified: true on every tier checked against the paper first)",
            argument="tiers",
        )
    return Tiers(doc["source"], doc["verified"], doc["tiers"], doc.get("boundaries", ""), str(p))


# ----------------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class Answers:
    """One assessor's validated answers: ``answers`` maps item id -> ``{"rung", "evidence",
    "note"}`` (answered items only; evidence is kind -> reference); ``note`` is the file's
    top-level note (None when absent or blank)."""

    system: str
    assessor: dict[str, Any]
    questionnaire_version: str
    answers: dict[str, dict[str, Any]]
    source: str = ""
    fictitious: bool = False
    date: str | None = None
    note: str | None = None

    @property
    def name(self) -> str:
        return self.assessor["name"]


def load_answers(
    answers: str | os.PathLike | dict[str, Any],
    questionnaire: Questionnaire | None = None,
    *,
    argument: str = "answers",
) -> Answers:
    """Load and validate one assessor's answers file (YAML/JSON path or an already-read mapping).

    Parameters
    ----------
    answers : path-like or dict
    questionnaire : Questionnaire, optional
        Default: the shipped questionnaire. The file's ``questionnaire_version`` must match.
    argument : str
        The name used in error messages.

    Raises
    ------
    InputError
        A YAML syntax error (with its line), a schema violation, a version mismatch, an unknown
        item, a rung outside 1..8 or not among the item's options, an unknown evidence kind,
        evidence claimed but empty, evidence or a note for an item without a rung, or a ``file:``
        reference that does not exist. The message names the item.

    Examples
    --------
    >>> a = load_answers(data_path(EXAMPLE_ANSWERS[0]))
    >>> a.assessor["perspective"], a.answers["data.planning"]["rung"]
    ('self', 3)
    """
    q = load_questionnaire() if questionnaire is None else questionnaire
    base: Path | None = None
    if isinstance(answers, dict):
        doc, where, source = _dates_as_text(answers), argument, ""
    elif not isinstance(answers, (str, os.PathLike)):
        raise InputError.bad(argument, "an answers file's path or its mapping", answers)
    else:
        p = Path(answers)
        where = f"{argument} ({p.name})"
        doc, base, source = read_document(p, argument), p.parent, str(p)
        doc = dict(doc)
    _check_schema(doc, "answers.schema.json", where)
    _refuse_other_version(doc["questionnaire_version"], q, where, argument)
    cleaned: dict[str, dict[str, Any]] = {}
    for item_id, answer in doc["answers"].items():
        _refuse_unknown_item(item_id, q, where, argument)
        answer = answer or {}
        rung = answer.get("rung")
        evidence = {k: v for k, v in (answer.get("evidence") or {}).items()}
        if rung is None:  # a skipped item: evidence or a note for it would be dropped unseen
            given = "evidence" if evidence else "note" if (answer.get("note") or "").strip() else ""
            if given:
                raise InputError(
                    f"{where}: item {item_id!r}: expected a rung for the {given} given, got none",
                    argument=argument,
                )
            continue
        if isinstance(rung, bool) or rung not in RUNGS:
            raise InputError(
                f"{where}: item {item_id!r}: expected a rung in 1..8, got {rung!r} (out of range)",
                argument=argument,
            )
        _refuse_rung_or_kind(item_id, rung, evidence, q, where, argument)
        for kind, ref in evidence.items():
            if ref is None or not str(ref).strip():
                raise InputError(
                    f"{where}: item {item_id!r}: evidence {kind!r} is claimed but missing "
                    "(expected a link, a file: reference or a description, got nothing)",
                    argument=argument,
                )
            ref = str(ref).strip()
            if ref.startswith("file:"):
                target = Path(ref[5:])
                if not target.is_absolute() and base is not None:
                    target = base / target
                if not target.is_file():  # a folder was called "no such file" too
                    got = "a folder" if target.is_dir() else "no such file"
                    raise InputError(
                        f"{where}: item {item_id!r}: evidence {kind!r} is claimed but missing "
                        f"(expected the file {ref[5:]!r} to exist, got {got})",
                        argument=argument,
                    )
            evidence[kind] = ref
        cleaned[item_id] = {"rung": int(rung), "evidence": evidence, "note": answer.get("note")}
    return Answers(
        system=doc["system"],
        assessor=dict(doc["assessor"]),
        questionnaire_version=doc["questionnaire_version"],
        answers=cleaned,
        source=source,
        fictitious=bool(doc.get("fictitious", False)),
        date=None if doc.get("date") is None else str(doc["date"]),
        note=(doc.get("note") or "").strip() or None,
    )


# -------------------------------------------------------------------------- validate / blank


def _refuse_other_version(version: Any, q: Questionnaire, where: str, argument: str) -> None:
    """Answers of another questionnaire version (a file's or a loaded Answers')."""
    if version != q.version:
        raise InputError(
            f"{where}: questionnaire_version: expected {q.version!r} (this questionnaire), got "
            f"{version!r}",
            argument=argument,
        )


def _refuse_unknown_item(item_id: str, q: Questionnaire, where: str, argument: str) -> None:
    """An answer to an item the questionnaire lacks."""
    if not any(item["id"] == item_id for item in q.items):
        raise InputError(
            f"{where}: item {item_id!r}: expected an item of questionnaire {q.version} "
            f"(e.g. {q.items[0]['id']!r}), got an unknown item",
            argument=argument,
        )


def _refuse_rung_or_kind(
    item_id: str, rung: int, evidence: Any, q: Questionnaire, where: str, argument: str
) -> None:
    """A rung the item does not offer, or an evidence kind the questionnaire does not know
    (``evidence``: the claimed kinds, a mapping or a sequence)."""
    item = next(item for item in q.items if item["id"] == item_id)
    offered = [o["rung"] for o in item["options"]]
    if rung not in offered:
        raise InputError(
            f"{where}: item {item_id!r}: expected a rung among this item's options {offered}, "
            f"got {rung}",
            argument=argument,
        )
    kinds = q.evidence_kinds
    for kind in evidence:
        if kind not in kinds:
            raise InputError(
                f"{where}: item {item_id!r}: expected evidence kinds among {sorted(kinds)}, "
                f"got {kind!r}",
                argument=argument,
            )


def validate_file(path: str | os.PathLike, questionnaire: Questionnaire | None = None) -> str:
    """Validate a questionnaire, answers, tiers or card file (told apart by its ``kind``);
    return the kind.

    Raises
    ------
    InputError
        Whatever the matching loader raises; an unknown ``kind``.

    Examples
    --------
    >>> validate_file(data_path("tiers.yaml"))
    'participation-tiers'
    """
    doc = read_document(path, "path")
    kind = doc.get("kind")
    try:
        if kind == "participation-questionnaire":
            load_questionnaire(path)
        elif kind == "participation-answers":
            load_answers(path, questionnaire, argument="path")
        elif kind == "participation-tiers":
            load_tiers(path)
    except InputError as exc:  # named by the file's kind: the file is ``path`` here (a bad
        # questionnaire file was blamed on the ``questionnaire`` argument, perhaps not given)
        argument, message = exc.argument or "", str(exc)
        if argument not in ("questionnaire", "tiers") or not message.startswith(argument):
            raise
        raise InputError("path" + message[len(argument) :], argument="path") from exc
    if kind == "participation-card":
        _check_schema(doc, "card.schema.json", f"path ({Path(path).name})")
    elif not isinstance(kind, str) or kind not in _KINDS:
        # one line naming the argument and the files it takes (was 'path kind: ... got None')
        got = "no 'kind' key" if kind is None else f"kind {kind!r}"
        raise InputError(
            f"path ({Path(path).name}): expected a questionnaire, answers, tiers or card file "
            f"(kind: {', '.join(_KINDS)}), got {got}",
            argument="path",
        )
    return kind


def blank_answers(questionnaire: Questionnaire | None = None) -> str:
    """The blank answers file to fill in, as YAML text: every item with its question and options
    as comments and ``rung: null``.

    Examples
    --------
    >>> text = blank_answers()
    >>> "data.planning:" in text and "rung: null" in text
    True
    """
    q = load_questionnaire() if questionnaire is None else questionnaire
    kinds = q.evidence_kinds
    out = [
        f"# trustlab participation questionnaire {q.version}: blank answers.",
        "# A structured self- or external-assessment aid; it does not measure democratic",
        "# legitimacy. For each item pick the rung (1-8) that describes what happens and list",
        "# the evidence for it (a link, 'file:relative/path' or a short description). A rung is",
        "# credited only when all the evidence its option names is given; otherwise the highest",
        "# lower option whose evidence is complete is credited. Leave rung: null to skip an item.",
        "# Evidence kinds:",
    ]
    out += [f"#   {k}: {_one_line(d)}" for k, d in kinds.items()]
    out += [
        "kind: participation-answers",
        f"questionnaire_version: {q.version}",
        "system: null  # the AI system assessed",
        "assessor:",
        "  name: null",
        "  role: null",
        "  perspective: self  # self or external",
        "date: null",
        "answers:",
    ]
    for item in q.items:
        out.append(f"  # [{item['dimension']} / {item['stage']}] {_one_line(item['question'])}")
        for option in item["options"]:
            out.append(
                f"  #   {option['rung']}: {_one_line(option['text'])} "
                f"(evidence: {', '.join(option['evidence'])})"
            )
        out += [f"  {item['id']}:", "    rung: null", "    evidence: {}", "    note: null"]
    return "\n".join(out) + "\n"


def _one_line(text: str) -> str:
    """A questionnaire text as one comment line: a second line would be read as YAML."""
    return " ".join(str(text).split())

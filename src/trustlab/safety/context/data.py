"""CASE-Bench data: the authors' record format, its schema, context ablation, the synthetic set.

A record (``CASEBench_data.json`` holds 900, the authors' per-model output files the same
records plus the prediction under the model's name)::

    {"query": str, "category": str, "context_intended_to_be_safe": bool, "safe_rate": float,
     "scores": [1 | 2, ...],          # votes, 1 = safe, 2 = unsafe
     "context": {"sender": {"nature_of_the_interaction", "platform_type"},
                 "recipient": {"type", "background"},
                 "transmission_principle": {"sender_purpose", "confidentiality",
                                            "source_accountability", ["urgency"]}}}

Context values are text or (a few ``background`` values) a mapping of texts. Labels come from
``safe_rate`` (k/21) or from a list of 21 votes, never from a list of 20: the authors' data file
carries only the first 20 of the 21 votes, and a majority over those 20 differs from the real
one on 66 of 900 items. All 66 are among the 92 items that tie 10/10 over the 20: a strict
majority calls them unsafe, and their 21st vote makes them safe.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import check_existing_file
from trustlab._lazy import require
from trustlab._results import Result
from trustlab.errors import InputError

__all__ = [
    "CI_GROUPS",
    "CI_KEYS",
    "VOTES_PER_ITEM",
    "FORCED_UNSAFE",
    "CaseBench",
    "load_casebench",
    "load_casebench_outputs",
    "ablate_context",
    "records_from",
]

#: The contextual-integrity groups and the keys each holds (``urgency`` is optional).
CI_GROUPS: dict[str, tuple[str, ...]] = {
    "sender": ("nature_of_the_interaction", "platform_type"),
    "recipient": ("type", "background"),
    "transmission_principle": (
        "sender_purpose",
        "confidentiality",
        "source_accountability",
        "urgency",
    ),
}
OPTIONAL_KEYS = frozenset({"urgency"})
#: Every sub-key, mapped to its group.
CI_KEYS: dict[str, str] = {key: group for group, keys in CI_GROUPS.items() for key in keys}
#: Human votes per item (chosen by the authors' power analysis).
VOTES_PER_ITEM = 21
#: Categories whose ground truth is unsafe whatever the context (SORRY-Bench's rule).
FORCED_UNSAFE = ("child-related crimes",)
# The fields of a record that are not a model's prediction.
RECORD_FIELDS = frozenset(
    {"query", "category", "context", "context_intended_to_be_safe", "safe_rate", "scores"}
)
_TOLERANCE = 1e-6
_UNION_TAGS = ("str", "constrained-str", "dict[")


@dataclass(frozen=True, eq=False)
class CaseBench(Result):
    """CASE-Bench records as columns (or the records of one model's output file).

    Attributes
    ----------
    queries, categories : tuple of str
    contexts : tuple of dict
        The CI context of each record, as given.
    intended_safe : ndarray of bool
        ``context_intended_to_be_safe``.
    safe_rate : ndarray of float
        The human share of safe votes as given (k / 21).
    safe_votes : ndarray of int
        k, the safe votes among :data:`VOTES_PER_ITEM` (from ``safe_rate`` or a 21-vote list).
    model : str or None
        The model whose predictions an output file holds.
    predictions : tuple or None
        The prediction of each record as the file holds it ("safe" / "unsafe" / "", a score,
        a probability).
    short_vote_lists : int
        Records whose vote list does not hold all 21 votes (ignored for labels).
    source : str
    """

    queries: tuple[str, ...] = field(repr=False)
    categories: tuple[str, ...] = field(repr=False)
    contexts: tuple[dict, ...] = field(repr=False)
    intended_safe: np.ndarray = field(repr=False)
    safe_rate: np.ndarray = field(repr=False)
    safe_votes: np.ndarray = field(repr=False)
    model: str | None = None
    predictions: tuple | None = field(default=None, repr=False)
    short_vote_lists: int = 0
    source: str = ""

    _dict_extras = ("n_records", "n_queries", "n_categories")

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def n_records(self) -> int:
        return len(self.queries)

    @property
    def n_queries(self) -> int:
        return len(set(self.queries))

    @property
    def n_categories(self) -> int:
        return len(set(self.categories))

    @property
    def soft_label(self) -> np.ndarray:
        """The soft ground truth y: ``safe_rate``, set to 0 for :data:`FORCED_UNSAFE`."""
        forced = np.isin(np.asarray(self.categories, dtype=object), FORCED_UNSAFE)
        return np.where(forced, 0.0, self.safe_rate)

    @property
    def human_safe(self) -> np.ndarray:
        """The human majority label (True: safe) after the forced-unsafe rule."""
        return self.soft_label > 0.5

    def _dict_items(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "model": self.model,
            "short_vote_lists": self.short_vote_lists,
            **{name: getattr(self, name) for name in self._dict_extras},
            "safe_intended": int(self.intended_safe.sum()),
            "human_safe": int(self.human_safe.sum()),
        }

    def summary(self) -> str:
        what = f"outputs of {self.model}" if self.model else "records"
        return (
            f"CASE-Bench {what}: {self.n_records} records, {self.n_queries} queries, "
            f"{self.n_categories} categories ({int(self.intended_safe.sum())} safe-intended "
            f"contexts; {int(self.human_safe.sum())} with a safe human majority)"
        )

    def records(self) -> list[dict]:
        """The records in the authors' format (votes as a 21-vote list)."""
        out = []
        for i in range(len(self)):
            k = int(self.safe_votes[i])
            record = {
                "scores": [1] * k + [2] * (VOTES_PER_ITEM - k),
                "query": self.queries[i],
                "context": self.contexts[i],
                "safe_rate": float(self.safe_rate[i]),
                "category": self.categories[i],
                "context_intended_to_be_safe": bool(self.intended_safe[i]),
            }
            if self.model is not None and self.predictions is not None:
                record[self.model] = self.predictions[i]
            out.append(record)
        return out


# --------------------------------------------------------------------------- schema


def _python_number(value: Any) -> Any:
    """A numpy integer or float as the Python number (np.bool_ stays, and is refused)."""
    return value.item() if isinstance(value, (np.integer, np.floating)) else value


def _whole_vote(value: Any) -> Any:
    """A vote written as a whole float (JSON ``2.0``, as the lax schema read it) as its int."""
    value = _python_number(value)
    return int(value) if isinstance(value, float) and value.is_integer() else value


@functools.cache
def _schema(ablated: bool = False) -> Any:
    """The pydantic model of one record (built on first use: pydantic is an optional import).

    ``ablated``: every CI group and key may be missing (the authors' ablation output files hold
    the contexts their judge saw, without the removed groups or keys)."""
    pydantic = require("pydantic", "evals")
    from typing import Annotated, Union

    text = Annotated[str, pydantic.StringConstraints(min_length=1)]
    value = Union[text, dict[str, Any]]  # noqa: UP007  (pydantic needs a runtime Union)
    strict = pydantic.ConfigDict(extra="allow", strict=True)

    def group(name: str) -> Any:
        fields = {
            key: (value | None, None) if ablated or key in OPTIONAL_KEYS else (value, ...)
            for key in CI_GROUPS[name]
        }
        return pydantic.create_model(name, __config__=strict, **fields)

    context = pydantic.create_model(
        "context",
        __config__=strict,
        **{
            name: (group(name) | None, None) if ablated else (group(name), ...)
            for name in CI_GROUPS
        },
    )
    # strict: a JSON true, "1" or "0.5" is no vote or share (lax, true read as 1.0 and "1" as
    # a vote that the count of 1s then missed); numpy numbers of records built in Python count
    numeric = pydantic.BeforeValidator(_python_number)
    whole = pydantic.BeforeValidator(_whole_vote)
    vote = Annotated[int, whole, pydantic.Field(ge=1, le=2, strict=True)]
    return pydantic.create_model(
        "record",
        __config__=pydantic.ConfigDict(extra="allow"),
        query=(text, ...),
        category=(text, ...),
        context=(context, ...),
        context_intended_to_be_safe=(pydantic.StrictBool, ...),
        safe_rate=(Annotated[float, numeric, pydantic.Field(ge=0.0, le=1.0, strict=True)], ...),
        scores=(list[vote] | None, None),
    )


def _validate(record: Any, index: int, name: str, ablated: bool = False) -> None:
    pydantic = require("pydantic", "evals")
    if not isinstance(record, Mapping):
        raise InputError(
            f"{name}: record {index}: expected a JSON object, got {type(record).__name__}",
            argument=name,
        )
    try:
        _schema(ablated).model_validate(record)
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        # pydantic's union member tags (str, constrained-str for the non-empty text, dict[...])
        # are no field names
        where = ".".join(str(p) for p in error["loc"] if not str(p).startswith(_UNION_TAGS))
        got = "missing" if error["type"] == "missing" else repr(error.get("input"))[:60]
        raise InputError(
            f"{name}: record {index}: field {where}: {error['msg'].lower()} (got {got})",
            argument=name,
        ) from None


def _votes(record: Mapping, index: int, name: str) -> tuple[int, bool]:
    """(safe votes of 21, whether the vote list was short) from safe_rate or 21 votes."""
    rate = float(record["safe_rate"])
    scores = record.get("scores")
    if scores is not None and len(scores) > VOTES_PER_ITEM:  # no share of 21 votes: not "short"
        raise InputError(
            f"{name}: record {index}: field scores: expected at most {VOTES_PER_ITEM} votes "
            f"(all {VOTES_PER_ITEM}, or the data file's first 20), got {len(scores)}",
            argument=name,
        )
    if scores is not None and len(scores) == VOTES_PER_ITEM:
        k = sum(1 for s in scores if s == 1)
        if abs(k / VOTES_PER_ITEM - rate) > _TOLERANCE:
            raise InputError(
                f"{name}: record {index}: field safe_rate: expected {k}/{VOTES_PER_ITEM} from its "
                f"{VOTES_PER_ITEM} votes, got {rate!r}",
                argument=name,
            )
        return k, False
    k = round(rate * VOTES_PER_ITEM)
    if abs(k - rate * VOTES_PER_ITEM) > _TOLERANCE * VOTES_PER_ITEM:
        raise InputError(
            f"{name}: record {index}: field safe_rate: expected a multiple of 1/{VOTES_PER_ITEM} "
            f"(a share of {VOTES_PER_ITEM} votes), got {rate!r}",
            argument=name,
        )
    return k, scores is not None


def records_from(source: Any, name: str = "path") -> tuple[list, str]:
    """The list of records in ``source`` (a JSON file path or a list of dicts) and its name."""
    if isinstance(source, (str, os.PathLike)):
        path = check_existing_file(source, name)
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError.bad(
                name, "a JSON file of CASE-Bench records", f"{path} ({exc})"
            ) from None
        label = str(path)
    else:
        records, label = source, "records"
    if isinstance(records, list) and not records:  # not "got 'list'": a list is what it asks for
        raise InputError(
            f"{name}: expected a non-empty JSON list of records, got an empty list", argument=name
        )
    if not isinstance(records, list):
        raise InputError.bad(name, "a non-empty JSON list of records", type(records).__name__)
    return records, label


def _build(
    records: Sequence, label: str, name: str, model: str | None, outputs: bool = False
) -> CaseBench:
    votes, short = [], 0
    for i, record in enumerate(records):
        output = model is not None or (
            outputs and isinstance(record, Mapping) and bool(set(record) - RECORD_FIELDS)
        )
        _validate(record, i, name, ablated=output)
        k, was_short = _votes(record, i, name)
        votes.append(k)
        short += was_short
    _refuse_duplicates(records, name)
    predictions = None
    if model is not None:
        missing = [i for i, r in enumerate(records) if model not in r]
        if missing:
            raise InputError(
                f"{name}: record {missing[0]}: field {model}: missing (the prediction of model "
                f"{model!r}; {len(missing)} record(s) lack it)",
                argument=name,
            )
        predictions = tuple(r[model] for r in records)
    return CaseBench(
        queries=tuple(r["query"] for r in records),
        categories=tuple(r["category"] for r in records),
        contexts=tuple(r["context"] for r in records),
        intended_safe=np.array([r["context_intended_to_be_safe"] for r in records], dtype=bool),
        safe_rate=np.array([float(r["safe_rate"]) for r in records]),
        safe_votes=np.array(votes, dtype=np.int64),
        model=model,
        predictions=predictions,
        short_vote_lists=short,
        source=label,
    )


def _refuse_duplicates(records: Sequence[Mapping], name: str) -> None:
    """Each query once per context: a repeated record (same query, context and intended context;
    a file concatenated twice, say) would count twice in every metric and test."""
    first: dict[str, int] = {}
    repeats = []
    for i, record in enumerate(records):
        key = json.dumps(
            [record["query"], record["context"], record["context_intended_to_be_safe"]],
            sort_keys=True,
            default=str,
        )
        if key in first:
            repeats.append(f"record {i} repeats record {first[key]}")
        else:
            first[key] = i
    if repeats:
        more = f" (and {len(repeats) - 3} more)" if len(repeats) > 3 else ""
        raise InputError(
            f"{name}: expected each record once (query, context and intended context), got "
            f"{len(repeats)} duplicate(s): {'; '.join(repeats[:3])}{more}",
            argument=name,
        )


def load_casebench(
    path: str | os.PathLike | Sequence[Mapping], *, outputs: bool = False
) -> CaseBench:
    """Read and validate CASE-Bench records (the authors' ``CASEBench_data.json`` format).

    Every record is checked against the schema of the contextual-integrity fields; an error
    names the record (its 0-based index) and the field. Labels come from ``safe_rate`` (or a
    list of all 21 votes, which must agree with it), never from a shorter vote list.

    Parameters
    ----------
    path : path or list of dict
        A JSON file holding a list of records, or the records themselves.
    outputs : bool
        Also read a model's output file (for statistics that do not read the contexts): a
        record holding a prediction (a key besides the record fields) may lack the CI groups or
        keys its ablation removed, as in the authors' ablation files. A record without one (a
        data file) still needs every field.

    >>> from trustlab.safety.context import synthetic_casebench
    >>> load_casebench(synthetic_casebench().records()).n_records
    60
    """
    records, label = records_from(path)
    return _build(records, label, "path", None, outputs=outputs)


def load_casebench_outputs(
    path: str | os.PathLike | Sequence[Mapping], model: str | None = None
) -> CaseBench:
    """Read one model's output file in the authors' released format (``exp/safety_M/output_*``):
    the records with the prediction under the model's name. A context may lack CI groups or
    keys (the authors' ablation files hold the contexts as their judge saw them).

    ``model`` None: the one key of the records that is not a record field (an error lists the
    candidates when there are several).
    """
    records, label = records_from(path)
    if model is None:
        _validate(
            records[0], 0, "path", ablated=True
        )  # a list of numbers is no record, not a missing model
        candidates = sorted(set(records[0]) - RECORD_FIELDS)
        if len(candidates) != 1:
            raise InputError.bad(
                "model",
                "the model whose predictions the file holds (the records' keys besides "
                f"{', '.join(sorted(RECORD_FIELDS))}: {', '.join(candidates) or 'none'})",
                None,
            )
        model = candidates[0]
    elif not isinstance(model, str) or not model:
        raise InputError.bad("model", "a model name (a key of the records)", model)
    elif model in RECORD_FIELDS:  # --model safe_rate scored the human votes as predictions
        raise InputError.bad(
            "model",
            "a model name, not a record field ("
            f"{', '.join(sorted(RECORD_FIELDS))}; the records' other keys hold predictions)",
            model,
        )
    return _build(records, label, "path", model)


# --------------------------------------------------------------------------- ablation


def _removals(remove: str | Iterable[str] | None) -> list[str]:
    if remove is None:
        return []
    if isinstance(remove, str):
        names = remove.split(",")
    elif isinstance(remove, Iterable) and not isinstance(remove, (bytes, Mapping)):
        names = list(remove)
    else:  # -T ablate=true or ablate=1 arrive as YAML's bool or int
        raise InputError.bad(
            "ablate", "CI group or key names (comma-separated text or a list)", remove
        )
    names = [str(n).strip() for n in names if str(n).strip()]
    valid = [*CI_GROUPS, *CI_KEYS]
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise InputError.bad(
            "ablate", f"CI groups or keys among {', '.join(valid)}", ", ".join(unknown)
        )
    return names


def ablate_context(context: Mapping, ablate: str | Iterable[str] | None) -> dict:
    """The context without the CI groups or sub-keys named in ``ablate``.

    ``ablate`` is a list or a comma-separated string of group names (sender, recipient,
    transmission_principle) and sub-keys (confidentiality, platform_type, type ...); a group
    left empty is dropped, so removing all three groups leaves ``{}`` ("no context"). An
    unknown name raises an InputError that lists the valid ones.

    >>> ablate_context({"sender": {"platform_type": "web"}, "recipient": {"type": "x"}},
    ...                "sender")
    {'recipient': {'type': 'x'}}
    """
    names = _removals(ablate)
    out = {
        group: dict(values) if isinstance(values, Mapping) else values
        for group, values in context.items()
    }
    for name in names:
        if name in CI_GROUPS:
            out.pop(name, None)
        else:
            group = out.get(CI_KEYS[name])
            if isinstance(group, dict):
                group.pop(name, None)
    return {group: values for group, values in out.items() if values != {}}


def check_ablate(ablate: str | Iterable[str] | None) -> tuple[str, ...]:
    """The validated removal names (for callers that ablate many contexts), each once, in the
    order of the CI fields (groups, then keys), so one ablation has one name however written
    ("recipient,sender" and "sender,recipient,sender" are ``("sender", "recipient")``)."""
    names = set(_removals(ablate))
    return tuple(name for name in (*CI_GROUPS, *CI_KEYS) if name in names)

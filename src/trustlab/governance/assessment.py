"""Scoring a participation assessment: per dimension the highest evidenced rung, then its tier.

The rule, per assessor and item: the answer claims a rung; the item's option at that rung names
the evidence kinds it needs. The item is credited with the highest option at or below the
claimed rung whose evidence kinds were all given (none when no option's evidence is complete):
missing evidence downgrades, it never upgrades. Per dimension, the credited rung is the highest
rung credited to any of its items (stages); the tier comes from the configurable rung->tier
table. The profile is the vector of tiers, one per dimension, and never one number.

With several assessors each keeps their own profile; the pooled rung of a dimension is the lower
median of the assessors' credited rungs (those with one), and agreement is reported as
Krippendorff's alpha (ordinal) and Fleiss' kappa over the items' credited rungs, per dimension
and overall. A dimension is flagged when its assessors land in different tiers or its alpha is
below 0.667 (Krippendorff's lowest level for tentative conclusions).

This is a structured self- or external-assessment aid. It does not measure democratic legitimacy
and has no empirical validation.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._results import Result, new_axes
from trustlab.errors import InputError
from trustlab.governance.questionnaire import (
    Answers,
    Questionnaire,
    Tiers,
    _refuse_other_version,
    _refuse_rung_or_kind,
    _refuse_unknown_item,
    load_answers,
    load_questionnaire,
    load_tiers,
)
from trustlab.governance.reliability import (
    fleiss_kappa,
    krippendorff_alpha_ordinal,
    ratings_table,
)

__all__ = ["ParticipationAssessment", "assess", "credited_rung", "ALPHA_THRESHOLD", "DISCLAIMER"]

#: Krippendorff (2004): alpha below 0.667 does not support even tentative conclusions.
ALPHA_THRESHOLD = 0.667

DISCLAIMER = (
    "A structured self- or external-assessment aid built on Arnstein's (1969) ladder and the "
    "Right to AI (Mushkani et al., 2025). It records who takes part in deciding about an AI "
    "system and the evidence given for it; it has no empirical validation and does not measure "
    "democratic legitimacy."
)


def credited_rung(item: dict[str, Any], claimed: int, evidence: set[str] | dict) -> int | None:
    """The rung an item is credited with: the highest option at or below ``claimed`` whose
    evidence kinds are all in ``evidence``; None when there is none.

    Examples
    --------
    >>> item = {"options": [{"rung": 3, "evidence": ["doc"]},
    ...                     {"rung": 4, "evidence": ["doc", "minutes"]}]}
    >>> credited_rung(item, 4, {"doc"}), credited_rung(item, 4, {"doc", "minutes"})
    (3, 4)
    >>> print(credited_rung(item, 4, set()))
    None
    """
    given = set(evidence)
    best = None
    for option in item["options"]:
        if option["rung"] <= claimed and set(option["evidence"]) <= given:
            best = option["rung"] if best is None else max(best, option["rung"])
    return best


def _option(item: dict[str, Any], rung: int) -> dict[str, Any] | None:
    for option in item["options"]:
        if option["rung"] == rung:
            return option
    return None


def _lower_median(values: list[int]) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


@dataclass(frozen=True)
class ParticipationAssessment(Result):
    """A participation profile: per governance dimension the credited Arnstein rung and its tier.

    Attributes
    ----------
    system : str
        The AI system assessed.
    questionnaire_version : str
    assessors : list of dict
        ``name``, ``role``, ``perspective`` (``self`` or ``external``), ``source`` (file),
        ``fictitious``, ``date`` and ``note`` (the answers file's top-level note, or None) of
        each assessor.
    profile : dict
        Dimension id -> tier id (None where no rung is credited): the profile, never one number.
    dimensions : list of dict
        Per dimension: ``id``, ``title``, ``rung`` (pooled), ``rung_name``, ``arnstein_group``,
        ``tier``, ``tier_label``, ``tier_name``, ``tier_verified``, ``assessor_rungs``,
        ``items`` (claimed and credited rungs, the evidence given (kind -> reference) and the
        notes, per assessor), ``missing_evidence`` (what would
        have confirmed the claimed rungs), ``next_step`` (the rung and evidence that would reach
        the next tier up that the dimension's items offer an option in, with the paper's
        recommendation and its citation) and ``disagreement``.
    agreement : dict or None
        With two or more assessors: Krippendorff's alpha (ordinal) and Fleiss' kappa per
        dimension and overall, the units counted, and the flagged dimensions and items.
    tiers : dict
        The rung->tier table used, with its provenance (``verified``).
    disclaimer : str
    """

    system: str
    questionnaire_version: str
    assessors: list
    profile: dict
    dimensions: list
    agreement: dict | None
    tiers: dict
    disclaimer: str = DISCLAIMER

    figure_name = "participation.png"
    figure_size = (7.5, 4.5)

    @property
    def multi(self) -> bool:
        return len(self.assessors) > 1

    def dimension(self, dimension_id: str) -> dict[str, Any]:
        for dim in self.dimensions:
            if dim["id"] == dimension_id:
                return dim
        raise InputError.bad("dimension_id", f"one of {list(self.profile)}", dimension_id)

    def summary(self) -> str:
        names = ", ".join(a["name"] for a in self.assessors)
        lines = [
            f"Participation assessment of {self.system!r} ({len(self.assessors)} assessor(s): "
            f"{names}; questionnaire {self.questionnaire_version})",
        ]
        if not self.tiers["verified"]:
            table = "placeholder table" if self.tiers == load_tiers().to_dict() else "table"
            lines.append(f"  tiers: UNVERIFIED {table} (see docs); Arnstein rungs exact")
        answered = {d["id"]: any(it["claimed"] for it in d["items"]) for d in self.dimensions}
        if not any(answered.values()):  # every rung null: nothing was assessed
            lines.append("  no item answered (every rung null): nothing assessed")
        for dim in self.dimensions:
            rung = dim["rung"]
            # no rung credited: answered, evidence incomplete (docs); not answered: no claim
            none = "no rung credited" if answered[dim["id"]] else "not answered"
            where = none if rung is None else (
                f"rung {rung} {dim['rung_name']} ({dim['arnstein_group']}) -> {dim['tier_label']}"
            )  # fmt: skip
            flag = "  [assessors disagree]" if dim["disagreement"] else ""
            lines.append(f"  {dim['title']}: {where}{flag}")
        if self.agreement is not None:
            overall = self.agreement["overall"]
            lines.append(
                f"  agreement overall: alpha {_fmt(overall['alpha'])}, "
                f"Fleiss kappa {_fmt(overall['kappa'])}"
            )
        lines.append("  " + self.disclaimer)
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """A ladder chart: rungs 1..8 upwards, one column per dimension, tier bands shaded;
        each assessor's credited rung is a marker, the pooled rung a bar. The texts from the
        files (system, names, titles, labels) are drawn as written: a ``$`` in them starts no
        mathtext (``$\\frac{a}$`` failed to draw, ``$5 to $10`` came out in italics)."""
        ax = new_axes(ax, self.figure_size)
        dims = self.dimensions
        x = np.arange(len(dims))
        shades = ["#f2f2f2", "#ffffff"]
        for i, tier in enumerate(self.tiers["tiers"]):
            lo, hi = min(tier["rungs"]) - 0.5, max(tier["rungs"]) + 0.5
            ax.axhspan(lo, hi, color=shades[i % 2], zorder=0)
            label = tier["label"] + ("" if tier["verified"] else " (unverified)")
            ax.text(len(dims) - 0.45, (lo + hi) / 2, label, va="center", fontsize=7, color="0.4",
                    parse_math=False)  # fmt: skip
        pooled = [d["rung"] if d["rung"] is not None else 0 for d in dims]
        ax.bar(x, pooled, width=0.55, color="#9ecae1", zorder=1, label="pooled rung")
        markers = "os^DvP*X"
        for j, assessor in enumerate(self.assessors):
            ys = [d["assessor_rungs"].get(assessor["name"]) for d in dims]
            shown = [(xi + (j - (len(self.assessors) - 1) / 2) * 0.12, y)
                     for xi, y in zip(x, ys, strict=True) if y is not None]  # fmt: skip
            if shown:
                xs, yv = zip(*shown, strict=True)
                ax.scatter(xs, yv, marker=markers[j % len(markers)], zorder=2, s=28,
                           label=assessor["name"])  # fmt: skip
        ax.set_xticks(x)
        ax.set_xticklabels([d["title"] for d in dims], rotation=25, ha="right", fontsize=8,
                           parse_math=False)  # fmt: skip
        ax.set_yticks(range(1, 9))
        ax.set_ylim(0, 8.6)
        ax.set_xlim(-0.6, len(dims) + 0.4)
        ax.set_ylabel("Arnstein rung (1 manipulation .. 8 citizen control)")
        ax.set_title(f"Participation profile: {self.system}", fontsize=10, parse_math=False)
        for text in ax.legend(fontsize=7, loc="upper left").get_texts():
            text.set_parse_math(False)
        return ax


def _fmt(value: float | None) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3f}"


# ---------------------------------------------------------------------------------- assess


def assess(
    answers: Any,
    *,
    questionnaire: Questionnaire | str | os.PathLike | None = None,
    tiers: Tiers | str | os.PathLike | None = None,
) -> ParticipationAssessment:
    """Score one or several assessors' answers for one system.

    Parameters
    ----------
    answers : path-like, dict, Answers, or a list (any iterable) of them
        One answers file per assessor (validated with :func:`load_answers`).
    questionnaire : Questionnaire or path-like, optional
        Default: the shipped questionnaire.
    tiers : Tiers or path-like, optional
        The rung->tier table. Default: the shipped one, whose tier names and boundaries are
        unverified placeholders (see the docs).

    Returns
    -------
    ParticipationAssessment

    Raises
    ------
    InputError
        An invalid answers file (see :func:`load_answers`), an ``Answers`` of another
        questionnaire version, naming an item it lacks, or a rung or evidence kind the item does
        not offer, no answers, answers about different systems, or two files from one assessor
        (names equal up to spaces, case and the Unicode form of accented letters), naming both
        files.

    Examples
    --------
    >>> from trustlab.governance import EXAMPLE_ANSWERS, data_path
    >>> result = assess([data_path(name) for name in EXAMPLE_ANSWERS])
    >>> result.profile
    {'data': 'T2', 'objectives': 'T1', 'design': 'T2', 'evaluation': 'T2', 'deployment': 'T1', 'redress': 'T2'}
    """
    q = (
        questionnaire
        if isinstance(questionnaire, Questionnaire)
        else load_questionnaire(questionnaire)
    )
    t = tiers if isinstance(tiers, Tiers) else load_tiers(tiers)
    if isinstance(answers, (str, os.PathLike, dict, Answers)):
        given = [answers]
    elif isinstance(answers, (bytes, bytearray, memoryview)):  # list() would give its bytes
        raise InputError.bad("answers", "a path, mapping or Answers, or a list of them", answers)
    else:  # a list, tuple or any iterable (Path.glob's generator)
        try:
            given = list(answers)
        except TypeError:
            raise InputError.bad(
                "answers", "a path, mapping or Answers, or a list of them", answers
            ) from None
    if not given:
        raise InputError.bad("answers", "at least one answers file", answers)
    loaded = [
        _of_questionnaire(a, q, f"answers[{i}]")
        if isinstance(a, Answers)
        else load_answers(a, q, argument=f"answers[{i}]")
        for i, a in enumerate(given)
    ]
    _refuse_other_system(loaded)
    _refuse_same_assessor(loaded)
    return _score(q, t, loaded)


def _of_questionnaire(answers: Answers, q: Questionnaire, argument: str) -> Answers:
    """Answers loaded already (load_answers against another questionnaire, perhaps) must be of
    this one: those of questionnaire 2.0.0 were scored against 1.0.0 unseen, the items 1.0.0
    lacks dropped, and the result said 1.0.0. Their rungs and evidence kinds are checked as
    load_answers checks a file's."""
    where = f"{argument} ({Path(answers.source).name})" if answers.source else argument
    _refuse_other_version(answers.questionnaire_version, q, where, argument)
    for item_id, answer in answers.answers.items():
        _refuse_unknown_item(item_id, q, where, argument)
        # a questionnaire of one's own keeping the version: its options and evidence kinds
        # (a rung it does not offer was credited nothing, unseen)
        _refuse_rung_or_kind(item_id, answer["rung"], answer["evidence"], q, where, argument)
    return answers


def _refuse_other_system(loaded: list[Answers]) -> None:
    """Answers about another system are refused naming the file and both systems in full (the
    message listed the systems cut short, naming no file to correct). A name typed with its
    accents composed in one file and decomposed in another ("Zoë" as U+00EB or e + U+0308) is
    one system: it was refused as two, the message showing the same name twice."""
    for i, a in enumerate(loaded[1:], start=1):
        if _same_text(a.system) != _same_text(loaded[0].system):
            first, other = (x.source or f"answers[{k}]" for x, k in ((loaded[0], 0), (a, i)))
            raise InputError(
                f"answers: expected answers files about one system, got {a.system!r} in {other} "
                f"and {loaded[0].system!r} in {first}",
                argument="answers",
            )


def _same_text(text: str) -> str:
    """``text`` with its accented letters in one Unicode form (NFC): composed "ë" and
    "e" + U+0308 look and read alike."""
    return unicodedata.normalize("NFC", text)


def _refuse_same_assessor(loaded: list[Answers]) -> None:
    """Two answers files from one assessor (names equal up to spaces, case and the Unicode form
    of accented letters: "A" and "a ", "Zoë" composed and decomposed) are refused, naming both
    files: they would score as two assessors whose columns look alike."""
    seen: dict[str, int] = {}
    for i, a in enumerate(loaded):
        key = _same_text(" ".join(_same_text(a.name).split()).casefold())
        if key in seen:
            j = seen[key]
            first, second = (x.source or f"answers[{k}]" for x, k in ((loaded[j], j), (a, i)))
            alike = (
                f" (names {loaded[j].name!r} and {a.name!r} differ only in spaces, case or "
                "the Unicode form of accented letters)"
                if loaded[j].name != a.name
                else ""
            )
            raise InputError(
                "answers: expected one answers file per assessor (assessors with different "
                f"names), got two from assessor {loaded[j].name!r}: {first} and {second}{alike}",
                argument="answers",
            )
        seen[key] = i


def _score(q: Questionnaire, t: Tiers, loaded: list[Answers]) -> ParticipationAssessment:
    names = [a.name for a in loaded]
    rungs_info = q.rungs
    per_item: dict[str, dict[str, Any]] = {}
    for item in q.items:
        claimed, credited, missing, evidence, notes = {}, {}, {}, {}, {}
        for a in loaded:
            answer = a.answers.get(item["id"])
            if answer is None:
                continue
            given = set(answer["evidence"])
            evidence[a.name] = dict(answer["evidence"])
            if answer.get("note"):
                notes[a.name] = answer["note"]
            claimed[a.name] = answer["rung"]
            credited[a.name] = credited_rung(item, answer["rung"], given)
            option = _option(item, answer["rung"])
            lacking = sorted(set(option["evidence"]) - given) if option else []
            if lacking:
                missing[a.name] = lacking
        per_item[item["id"]] = {
            "id": item["id"],
            "stage": item["stage"],
            "question": item["question"],
            "claimed": claimed,
            "credited": credited,
            "missing": missing,
            "evidence": evidence,
            "notes": notes,
        }
    dimensions, profile = [], {}
    for dim in q.dimensions:
        items = [per_item[i["id"]] for i in q.items if i["dimension"] == dim["id"]]
        assessor_rungs = {}
        for name in names:
            values = [it["credited"][name] for it in items if it["credited"].get(name) is not None]
            assessor_rungs[name] = max(values) if values else None
        rung = _lower_median([r for r in assessor_rungs.values() if r is not None])
        tier = t.tier_of(rung)
        # assessors who answered no item of the dimension have no view of it: they do not
        # disagree with those who did
        tiers_seen = {
            t.index_of(assessor_rungs[name])
            for name in names
            if any(name in it["credited"] for it in items)
        }
        missing = [
            {"item": it["id"], "assessor": name, "claimed": it["claimed"][name],
             "credited": it["credited"][name], "missing": kinds}
            for it in items for name, kinds in it["missing"].items()
        ]  # fmt: skip
        dimensions.append(
            {
                "id": dim["id"],
                "title": dim["title"],
                "rung": rung,
                "rung_name": None if rung is None else rungs_info[rung]["name"],
                "arnstein_group": None if rung is None else rungs_info[rung]["group"],
                "tier": None if tier is None else tier["id"],
                "tier_label": "no rung credited" if tier is None else tier["label"],
                "tier_name": None if tier is None else tier["name"],
                "tier_verified": None if tier is None else tier["verified"],
                "assessor_rungs": assessor_rungs,
                "items": items,
                "missing_evidence": missing,
                "next_step": _next_step(q, t, dim, rung),
                "disagreement": len(loaded) > 1 and len(tiers_seen) > 1,
            }
        )
        profile[dim["id"]] = None if tier is None else tier["id"]
    agreement = _agreement(q, t, loaded, per_item, dimensions) if len(loaded) > 1 else None
    assessors = [
        {**a.assessor, "role": a.assessor.get("role"), "source": a.source,
         "fictitious": a.fictitious, "date": a.date, "note": a.note}
        for a in loaded
    ]  # fmt: skip
    return ParticipationAssessment(
        system=loaded[0].system,
        questionnaire_version=q.version,
        assessors=assessors,
        profile=profile,
        dimensions=dimensions,
        agreement=agreement,
        tiers=t.to_dict(),
    )


def _next_step(q: Questionnaire, t: Tiers, dim: dict, rung: int | None) -> dict[str, Any] | None:
    """The next tier up that the dimension's items offer an option in, its lowest offered rung,
    the evidence the options in that tier need, and the paper's recommendation for the
    dimension (None at the top tier). With the shipped questionnaire (every item offers all
    eight rungs) this is the next tier and its lowest rung; a questionnaire of one's own whose
    items skip a tier (options 1-4 and 7) points to the tier its lowest option above lands in
    (Tier 4, rung 7), and with no option above, to the next tier with no options."""
    index = t.index_of(rung)
    target_index = 0 if index is None else index + 1
    if target_index >= len(t.tiers):
        return None
    target = t.tiers[target_index]
    target_rung = min(target["rungs"])
    lowest = []  # per item of the dimension, its lowest option at or above the next tier
    for item in q.items:
        above = [o for o in item["options"] if o["rung"] >= target_rung]
        if item["dimension"] == dim["id"] and above:
            lowest.append((item, min(above, key=lambda o: o["rung"])))
    options = []
    evidence: set[str] = set()
    if lowest:  # the tier the lowest such option lands in, and the options that land there
        target_rung = min(option["rung"] for _, option in lowest)
        target = t.tier_of(target_rung)
        for item, option in lowest:
            if option["rung"] in target["rungs"]:
                options.append({"item": item["id"], "rung": option["rung"], "text": option["text"]})
                evidence |= set(option["evidence"])
    recommendation = dim["recommendation"]
    return {
        "tier": target["id"],
        "tier_label": target["label"],
        "tier_verified": target["verified"],
        "rung": target_rung,
        "rung_name": q.rungs[target_rung]["name"],
        "options": options,
        "evidence": sorted(evidence),
        "recommendation": recommendation["text"],
        "citation": recommendation["citation"],
    }


def _agreement(
    q: Questionnaire,
    t: Tiers,
    loaded: list[Answers],
    per_item: dict[str, dict[str, Any]],
    dimensions: list[dict[str, Any]],
) -> dict[str, Any]:
    names = [a.name for a in loaded]

    def matrix(item_ids: list[str]) -> np.ndarray:
        data = np.full((len(names), len(item_ids)), np.nan)
        for j, iid in enumerate(item_ids):
            for i, name in enumerate(names):
                value = per_item[iid]["credited"].get(name)
                if value is not None:
                    data[i, j] = value
        return data

    def stats(item_ids: list[str]) -> dict[str, Any]:
        data = matrix(item_ids)
        pairable = int((np.sum(~np.isnan(data), axis=0) >= 2).sum())
        table = ratings_table(data, categories=list(range(1, 9)))
        alpha = krippendorff_alpha_ordinal(data)
        kappa = fleiss_kappa(table) if len(table) else float("nan")
        return {
            "alpha": alpha,
            "kappa": kappa,
            "units": len(item_ids),
            "pairable_units": pairable,
            "complete_units": int(len(table)),
        }

    per_dimension = {}
    for dim in q.dimensions:
        ids = [i["id"] for i in q.items if i["dimension"] == dim["id"]]
        per_dimension[dim["id"]] = stats(ids)
    overall = stats([i["id"] for i in q.items])
    flagged = []
    for dim in dimensions:
        low = per_dimension[dim["id"]]["alpha"]
        if np.isfinite(low) and low < ALPHA_THRESHOLD:
            dim["disagreement"] = True
        if dim["disagreement"]:
            flagged.append(dim["id"])
    items = []
    for iid, info in per_item.items():
        values = [v for v in info["credited"].values()]
        if len(values) >= 2 and len({t.index_of(v) for v in values}) > 1:
            items.append({"item": iid, "credited": info["credited"]})
    return {
        "assessors": names,
        "ratings": "credited rungs (after the evidence rule), items as units",
        "threshold_alpha": ALPHA_THRESHOLD,
        "overall": overall,
        "per_dimension": per_dimension,
        "flagged_dimensions": flagged,
        "flagged_items": items,
    }

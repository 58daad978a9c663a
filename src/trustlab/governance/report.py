"""The participation report's content (plain data) and its Markdown text.

The self-contained HTML page is built from the same parts by the audit layer
(:mod:`trustlab.audit.sections.participation`: ``build_page``, ``write_page``), the one place
pages are built. Parts: the profile (tier per dimension, the ladder chart), the missing evidence,
the evidence given (every answer's references and note), the next tier
up (the rung, its evidence and the recommendation with its citation), the agreement between
assessors (several assessors only) and the rung->tier table with its provenance.

>>> from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path
>>> text = markdown_report(assess(data_path(EXAMPLE_ANSWERS[0])))
>>> text.splitlines()[0]
'# Participation assessment: trustlab demo audit (default model zoo on the bundled chile data)'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from trustlab.errors import InputError

__all__ = ["markdown_report", "report_parts"]

_UNVERIFIED = (
    "The tier labels and the rung boundaries of the tiers are UNVERIFIED: the paper's four-tier "
    "figure could not be read when this table was written, so the tiers carry no names and the "
    "boundaries are a neutral placeholder (two rungs per tier). The Arnstein rungs and groups are "
    "exact. Replace the table (tiers.yaml) with the one transcribed from the paper."
)
_UNVERIFIED_OWN = (
    "The rung->tier table used (source: {source}) is UNVERIFIED: it says verified: false, so its "
    "tiers and boundaries were not checked against the paper's four-tier figure. The Arnstein "
    "rungs and groups are exact."
)


def _unverified_text(tiers: dict[str, Any]) -> str:
    """The warning for an unverified table: the shipped placeholder is described as such; a
    table of the user's own (``--tiers``) may have names and other boundaries."""
    from trustlab.governance.questionnaire import load_tiers

    if tiers == load_tiers().to_dict():
        return _UNVERIFIED
    return _UNVERIFIED_OWN.format(source=tiers["source"])


_RULE = (
    "Scoring: each item is credited with the highest option at or below the claimed rung whose "
    "evidence is complete; a dimension takes the highest rung credited to any of its items; "
    "with several assessors, the pooled rung is the lower median of theirs. The profile is a "
    "vector of tiers, one per dimension, never a single number."
)


def _check(assessment: Any) -> Any:
    from trustlab.governance.assessment import ParticipationAssessment

    if not isinstance(assessment, ParticipationAssessment):
        raise InputError.bad("assessment", "a ParticipationAssessment (assess())", assessment)
    return assessment


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.3f}"
    return str(value)


def _credit(rung: int | None, answered: bool) -> str:
    """An assessor's credited rung; without one, whether they answered (no rung credited: the
    evidence was incomplete) or not (not answered): the two differ and are worth the talk."""
    if rung is not None:
        return str(rung)
    return "no rung credited" if answered else "not answered"


def _cite(citation: dict[str, Any]) -> str:
    text = f"{citation['source']}, {citation['where']}"
    if citation.get("section"):
        text += f", {citation['section']}"
    return text + ("" if citation.get("verified") else " (unverified)")


def _tier_text(dim: dict[str, Any]) -> str:
    if dim["tier"] is None:  # 'no rung credited' means answered with evidence incomplete
        return "no rung credited" if any(it["claimed"] for it in dim["items"]) else "not answered"
    name = f": {dim['tier_name']}" if dim["tier_name"] else ""
    return f"{dim['tier_label']}{name}" + ("" if dim["tier_verified"] else " (unverified)")


def _ref(reference: str, source: str) -> str:
    """An evidence reference as the page shows it: a ``file:`` path becomes absolute (resolved
    against the answers file's folder, as it was checked), so that it opens from wherever the
    page is written; other references are shown as given."""
    if not reference.startswith("file:"):
        return reference
    target = Path(reference[5:])
    if not target.is_absolute() and source:
        target = Path(source).parent / target
    shown = os.path.abspath(target)
    if os.path.realpath(shown) != os.path.realpath(target):  # '..' after a symlinked folder:
        shown = os.path.realpath(target)  # abspath drops the folder, the check followed the link
    return "file:" + shown


def report_parts(assessment: Any) -> list[dict[str, Any]]:
    """The report's parts as plain data: ``id``, ``title``, ``paragraphs`` (text, kind),
    ``tables`` (columns, rows, caption) and ``figure`` (whether the ladder chart goes here)."""
    a = _check(assessment)
    names = [x["name"] for x in a.assessors]
    who = "; ".join(
        f"{x['name']} ({x['perspective']}"
        + (f", {x['role']}" if x.get("role") else "")
        + ")"
        + (" [fictitious]" if x.get("fictitious") else "")
        for x in a.assessors
    )
    profile_rows = []
    for d in a.dimensions:
        row = [d["title"], d["rung"], d["rung_name"] or "", d["arnstein_group"] or "",
               _tier_text(d)]  # fmt: skip
        if a.multi:
            answered = {n for it in d["items"] for n in it["claimed"]}
            row += [_credit(d["assessor_rungs"][n], n in answered) for n in names]
            row.append("yes" if d["disagreement"] else "no")
        profile_rows.append(row)
    profile_cols = ["dimension", "rung", "Arnstein rung", "Arnstein group", "tier"]
    if a.multi:
        profile_cols += [f"rung: {n}" for n in names] + ["disagreement"]
    paragraphs = [(a.disclaimer, "note"), (f"Assessors: {who}.", "text")]
    paragraphs += [  # an answers file's own note, on one line (no Markdown block of its own)
        (f"Note from {x['name']}: {' '.join(x['note'].split())}", "text")
        for x in a.assessors
        if x.get("note")
    ]
    paragraphs.append((_RULE, "text"))
    if not a.tiers["verified"]:
        paragraphs.append((_unverified_text(a.tiers), "warning"))
    made_up = [x["name"] for x in a.assessors if x.get("fictitious")]
    if len(made_up) == len(a.assessors):
        paragraphs.append(
            ("These answers are a fictitious worked example, not a real assessment.", "warning")
        )
    elif made_up:  # not every file: the others are real answers
        paragraphs.append(
            (f"The answers of {'; '.join(made_up)} are fictitious (a worked example), not a real "
             "assessment; the other assessors' are not marked fictitious.", "warning")
        )  # fmt: skip
    parts = [
        {
            "id": "profile",
            "title": "Participation profile",
            "paragraphs": paragraphs,
            "tables": [(profile_cols, profile_rows, "Tier per governance dimension")],
            "figure": True,
        }
    ]
    missing_rows = [
        [d["title"], m["item"], m["assessor"], m["claimed"], _credit(m["credited"], True),
         ", ".join(m["missing"])]
        for d in a.dimensions for m in d["missing_evidence"]
    ]  # fmt: skip
    parts.append(
        {
            "id": "missing-evidence",
            "title": "Missing evidence",
            "paragraphs": [
                (
                    "Claims whose evidence was incomplete, and what was missing; each was "
                    "credited with the highest lower option whose evidence was complete, or "
                    "with no rung when there was none."
                    if missing_rows
                    else "Every claimed rung came with the evidence its option names.",
                    "text",
                )
            ],
            "tables": [
                (
                    ["dimension", "item", "assessor", "claimed", "credited", "missing evidence"],
                    missing_rows,
                    "Missing evidence",
                )
            ]
            if missing_rows
            else [],  # fmt: skip
            "figure": False,
        }
    )
    sources = {x["name"]: x.get("source") or "" for x in a.assessors}
    given_rows = [
        [d["title"], it["id"], name, rung, _credit(it["credited"][name], True),
         "; ".join(f"{kind}: {_ref(ref, sources[name])}"
                   for kind, ref in it["evidence"][name].items()) or "none",
         it["notes"].get(name, "")]
        for d in a.dimensions for it in d["items"] for name, rung in it["claimed"].items()
    ]  # fmt: skip
    parts.append(
        {
            "id": "evidence-given",
            "title": "Evidence given",
            "paragraphs": [
                (
                    "Every answer with the evidence its assessor gave for it (kind: reference) "
                    "and the assessor's note: what each credited rung rests on. A file: "
                    "reference is shown as an absolute path, resolved against the folder of the "
                    "answers file that gives it."
                    if given_rows
                    else "No item was answered with a rung.",
                    "text",
                )
            ],
            "tables": [
                (
                    ["dimension", "item", "assessor", "claimed", "credited", "evidence", "note"],
                    given_rows,
                    "Evidence given",
                )
            ]
            if given_rows
            else [],  # fmt: skip
            "figure": False,
        }
    )
    step_rows = []
    tier_ids = [x["id"] for x in a.tiers["tiers"]]
    for d in a.dimensions:
        s = d["next_step"]
        if s is None:
            step_rows.append([d["title"], _tier_text(d), "top tier", "", "", "", ""])
            continue
        reach = f"{s['rung']} {s['rung_name']}"
        target = s["tier_label"]
        # tiers between now and the target: a questionnaire of one's own offers no option there
        now = -1 if d["tier"] is None else tier_ids.index(d["tier"])
        skipped = [x["label"] for x in a.tiers["tiers"][now + 1 : tier_ids.index(s["tier"])]]
        if d["tier"] is None and not skipped:  # the first tier is reached, not climbed to
            target += ", the first tier"
            reach = f"no rung credited yet; the first tier starts at rung {reach}"
        elif d["tier"] is None:
            reach = f"no rung credited yet; the lowest option offered is rung {reach}"
        target += "" if s["tier_verified"] else " (unverified)"
        if skipped:
            target += (f" ({', '.join(skipped)}: no item of this dimension offers an option "
                       "there)")  # fmt: skip
        evidence = ", ".join(s["evidence"])
        if not s["options"]:  # a questionnaire of one's own may stop below the next tier
            reach += " (no item of this dimension offers an option at or above it)"
            evidence = "none: out of reach with this questionnaire"
        step_rows.append([d["title"], _tier_text(d), target, reach,
                          evidence, s["recommendation"], _cite(s["citation"])])  # fmt: skip
    parts.append(
        {
            "id": "next-tier",
            "title": "Moving up a tier",
            "paragraphs": [
                (
                    "For each dimension: the lowest rung of the next tier up that its items "
                    "offer an option in, the evidence those options need, and the paper's "
                    "recommendation that points there.",
                    "text",
                )
            ],
            "tables": [
                (
                    [
                        "dimension",
                        "now",
                        "next tier",
                        "rung to reach",
                        "evidence needed",
                        "recommendation",
                        "citation",
                    ],
                    step_rows,
                    "The next tier up",
                )
            ],  # fmt: skip
            "figure": False,
        }
    )
    if a.agreement is not None:
        ag = a.agreement
        rows = [
            [a.dimension(k)["title"], _num(v["alpha"]), _num(v["kappa"]), v["pairable_units"],
             v["complete_units"], "yes" if k in ag["flagged_dimensions"] else "no"]
            for k, v in ag["per_dimension"].items()
        ]  # fmt: skip
        o = ag["overall"]
        rows.append(["overall", _num(o["alpha"]), _num(o["kappa"]), o["pairable_units"],
                     o["complete_units"], ""])  # fmt: skip
        flagged = ", ".join(ag["flagged_dimensions"]) or "none"
        item_rows = [
            [f["item"]] + [_credit(f["credited"].get(n), n in f["credited"]) for n in names]
            for f in ag["flagged_items"]
        ]
        tables = [
            (["dimension", "Krippendorff alpha (ordinal)", "Fleiss kappa", "pairable items",
              "complete items", "flagged"], rows, "Agreement between assessors")
        ]  # fmt: skip
        if item_rows:
            tables.append((["item", *names], item_rows, "Items whose credited tiers differ"))
        parts.append(
            {
                "id": "agreement",
                "title": "Agreement between assessors",
                "paragraphs": [
                    (
                        "Ratings are the items' credited rungs. Alpha treats rungs as ordinal "
                        "and allows missing ratings; kappa treats them as categories and uses "
                        "only the items every assessor was credited a rung for (an answer "
                        "without the evidence its rung needs credits none, so it counts as no "
                        "rating). A dimension is flagged when "
                        f"its assessors land in different tiers or its alpha is below "
                        f"{ag['threshold_alpha']}. Disagreement between stakeholders is itself "
                        f"a finding. Flagged: {flagged}.",
                        "warning" if ag["flagged_dimensions"] else "text",
                    )
                ],
                "tables": tables,
                "figure": False,
            }
        )
    tier_rows = [
        [t["id"], t["label"], t["name"] or "(no name: unverified)",
         ", ".join(map(str, t["rungs"])), "yes" if t["verified"] else "no"]
        for t in a.tiers["tiers"]
    ]  # fmt: skip
    parts.append(
        {
            "id": "tiers",
            "title": "Rung-to-tier table",
            "paragraphs": [
                (
                    f"Source: {a.tiers['source']}. Boundaries: {a.tiers['boundaries'] or 'n/a'}.",
                    "text",
                )
            ],  # fmt: skip
            "tables": [(["id", "label", "name", "rungs", "verified"], tier_rows, "Tiers")],
            "figure": False,
        }
    )
    return parts


# an underscore between two letters or digits starts no emphasis (CommonMark), so evidence kinds
# (public_document) and file paths stay readable in the Markdown source
_MD_SPECIAL = re.compile(r"([\\`*\[\]<&~]|(?<![^\W_])_|_(?![^\W_]))")


def _md_text(value: Any) -> str:
    """User text as Markdown shows it: every character a renderer would read as markup is
    backslash-escaped: ``<`` (no tag in an answers file, ``<script>``, becomes HTML), ``*`` and
    ``_`` (emphasis; not an underscore inside a word), backticks (code), ``[``/``]`` (links,
    images), ``&`` (``&copy;`` would turn into a symbol), ``~`` (strikethrough) and the backslash
    itself (or ``\\<script>`` would read as an escaped backslash and a raw tag). Table cells escape
    ``|`` too, the heading a closing ``#`` run; each text is written on one line, so a ``#`` or
    ``>`` in it starts no block."""
    return _MD_SPECIAL.sub(r"\\\1", str(value))


def _md_cell(value: Any) -> str:
    # every line break, a lone '\r' too (Markdown ends a line there): a table row stays one line
    return " ".join(_md_text(_num(value)).replace("|", "\\|").splitlines())


def markdown_report(assessment: Any, title: str | None = None) -> str:
    """The report as Markdown text (tables as pipe tables; no figure)."""
    a = _check(assessment)
    heading = " ".join(_md_text(title or f"Participation assessment: {a.system}").splitlines())
    # a trailing ' #' would close the heading and vanish ('Bot #' read 'Bot'): escape it
    heading = re.sub(r"(\s)(#+\s*)$", r"\1\\\2", heading)
    lines = [f"# {heading}", ""]
    for part in report_parts(a):
        lines += [f"## {part['title']}", ""]
        for text, kind in part["paragraphs"]:
            prefix = {"note": "> ", "warning": "> **Warning:** "}.get(kind, "")
            # one line: a line break in a name or role would start a heading or a quote there
            one = " ".join(line.strip() for line in _md_text(text).splitlines() if line.strip())
            lines += [prefix + one, ""]
        for columns, rows, caption in part["tables"]:
            lines += [f"*{caption}*", ""]
            lines.append("| " + " | ".join(_md_cell(c) for c in columns) + " |")
            lines.append("|" + "---|" * len(columns))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
            lines.append("")
    return "\n".join(lines)

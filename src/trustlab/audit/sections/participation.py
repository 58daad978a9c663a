"""Report section "Participation" and the standalone participation page.

:func:`build` is the audit's section: built only when the audit was given participation answers
files (``trustlab audit --participation answers.yaml``, repeatable;
``run_audit(participation=[...])``). :func:`build_page` and :func:`write_page` make the
standalone page of ``trustlab governance assess --out DIR`` from the same parts: the tier per
governance dimension with the ladder chart, the missing evidence, the next tier up with the
paper's recommendation, the agreement between assessors and the rung->tier table with its
provenance. A structured self- or external-assessment aid; it does not measure democratic
legitimacy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trustlab._results import json_text, output_dir, write_atomic
from trustlab.audit.context import AuditContext
from trustlab.errors import InputError
from trustlab.report import Figure, Paragraph, Report, Section, Table

__all__ = ["build", "build_page", "write_page", "TITLE", "HTML_NAME", "MARKDOWN_NAME", "CARD_NAME"]

TITLE = "Participation (Right to AI)"
HTML_NAME = "participation.html"
MARKDOWN_NAME = "participation.md"
CARD_NAME = "card.json"


def build(ctx: AuditContext) -> Section | None:
    """The participation section, or None when the audit has no participation answers."""
    assessment = ctx.participation
    if assessment is None:
        return None
    from trustlab.governance import participation_card, report_parts

    blocks = []
    for part in report_parts(assessment):
        blocks.append(Paragraph(part["title"], "note"))
        blocks += _blocks(assessment, part)
    tiers = ", ".join(f"{k}: {v or 'none'}" for k, v in assessment.profile.items())
    n = len(assessment.assessors)
    made_up = sum(bool(x.get("fictitious")) for x in assessment.assessors)
    who = f"{n} assessor{'s' if n > 1 else ''}" + (
        "" if not made_up else ", fictitious" if made_up == n else f", {made_up} fictitious"
    )
    summary = f"Tier per dimension ({who}): {tiers}."
    if assessment.agreement is not None:  # disagreement is itself a finding: say it here too
        flagged = assessment.agreement["flagged_dimensions"]
        summary += (
            f" Assessors disagree on {len(flagged)} of {len(assessment.profile)} dimensions: "
            f"{', '.join(flagged)}."
            if flagged
            else " No dimension is flagged for disagreement between assessors."
        )
    if not assessment.tiers["verified"]:
        from trustlab.governance import load_tiers

        shipped = assessment.tiers == load_tiers().to_dict()  # a --tiers table may have names
        summary += (
            " Tier labels and boundaries are unverified placeholders."
            if shipped
            else " The rung->tier table used is unverified."
        )
    return Section(
        "participation", TITLE, blocks, {"card": participation_card(assessment)}, summary=summary
    )


def _figure(assessment: Any) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=assessment.figure_size)
    assessment.plot(ax=figure.add_subplot())
    return Figure(figure, "Ladder chart: credited rung per dimension, tier bands shaded")


def _blocks(assessment: Any, part: dict[str, Any]) -> list[Any]:
    blocks: list[Any] = [Paragraph(text, kind) for text, kind in part["paragraphs"]]
    if part["figure"]:
        blocks.append(_figure(assessment))
    blocks += [Table(list(c), [list(r) for r in rows], cap) for c, rows, cap in part["tables"]]
    return blocks


def _check(assessment: Any) -> Any:
    from trustlab.governance import ParticipationAssessment

    if not isinstance(assessment, ParticipationAssessment):
        raise InputError.bad("assessment", "a ParticipationAssessment (assess())", assessment)
    return assessment


def build_page(assessment: Any, title: str | None = None) -> Report:
    """The standalone participation page as a :class:`~trustlab.report.Report` (one section per
    part of the report).

    Examples
    --------
    >>> from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path
    >>> page = build_page(assess(data_path(EXAMPLE_ANSWERS[0])))
    >>> [s.id for s in page.sections]
    ['profile', 'missing-evidence', 'evidence-given', 'next-tier', 'tiers']
    """
    from trustlab.governance import report_parts

    a = _check(assessment)
    page = Report(
        title or f"Participation assessment: {a.system}",
        {"system": a.system, "questionnaire": a.questionnaire_version,
         "assessors": [x["name"] for x in a.assessors], "tiers verified": a.tiers["verified"]},
    )  # fmt: skip
    for part in report_parts(a):
        data = {"profile": a.profile} if part["id"] == "profile" else {}
        page.add(Section(part["id"], part["title"], _blocks(a, part), data))
    return page


def write_page(assessment: Any, out_dir: str | os.PathLike, title: str | None = None) -> list[Path]:
    """Write ``participation.html`` (self-contained), ``participation.md``, ``card.json`` and
    ``result.json`` (the assessment's ``to_dict()``) into ``out_dir``; return the paths."""
    from trustlab.governance import markdown_report, participation_card

    a = _check(assessment)
    out = output_dir(out_dir, "out_dir")
    return [
        write_atomic(out / HTML_NAME, build_page(a, title).to_html("result.json")),
        write_atomic(out / MARKDOWN_NAME, markdown_report(a, title)),
        write_atomic(out / CARD_NAME, json_text(participation_card(a))),
        write_atomic(out / "result.json", json_text(a.to_dict())),
    ]

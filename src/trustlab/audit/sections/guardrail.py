"""The HTML page of a guardrail evaluation (``trustlab agents evaluate --out DIR``).

A standalone page: it reads a :class:`~trustlab.agents.GuardrailEvaluation` and computes nothing
itself. Sections: accuracy, false-positive rate and rule recall with their cluster-bootstrap
intervals (overall and per group), the confusion counts, and the cases decided wrongly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trustlab.errors import InputError
from trustlab.report import Figure, Paragraph, Report, Section, Table
from trustlab.report.builder import header_meta

__all__ = ["build_page", "write_page"]

_INTRO = (
    "Every case is one proposed action after a trajectory, labelled safe or unsafe. Blocked "
    "counts as positive: the false-positive rate is the share of safe actions blocked; rule "
    "recall is, over unsafe cases that name the rules they break, the mean share of those rules "
    "the guardrail reported while blocking the action (an allowed action reports none). Intervals are {level:.0%} percentile bootstrap intervals that "
    "resample whole trajectories (cases of one trajectory are not independent)."
)
_MODES = {
    "oracle": "Predicate values of the proposed step are the oracle's (the true values): this "
    "measures the rules and the inference alone, not the checkers that ground the predicates.",
    "checkers": "Predicate values come from the policy's checkers, computed from the trajectory: "
    "this measures the whole guardrail.",
}


def build_page(
    evaluation: Any, title: str | None = None, meta: Mapping[str, Any] | None = None
) -> Report:
    """The page of a :class:`~trustlab.agents.GuardrailEvaluation` as a
    :class:`~trustlab.report.Report`; ``meta`` is shown in its header."""
    from trustlab.agents import GuardrailEvaluation

    if not isinstance(evaluation, GuardrailEvaluation):
        raise InputError.bad("evaluation", "a GuardrailEvaluation (evaluate_guardrail)", evaluation)
    header = header_meta(meta)
    page = Report(
        title or "Agent guardrail: decisions against labelled actions",
        {"cases": evaluation.n_cases, "predicates from": evaluation.mode, **header},
    )
    for section in _sections(evaluation):
        page.add(section)
    return page


def write_page(
    evaluation: Any,
    out_dir: str | os.PathLike,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.json`` of ``evaluation`` into ``out_dir``."""
    return build_page(evaluation, title, meta).write(out_dir)


def _cells(m: Mapping[str, Any]) -> list[Any]:
    return [m.get("estimate"), m.get("low"), m.get("high"), m.get("n", 0)]


def _sections(ev: Any) -> list[Section]:
    from matplotlib.figure import Figure as MplFigure

    from trustlab.agents.evaluation import METRICS

    rows = [["all", name.replace("_", " "), *_cells(ev.metrics[name])] for name in METRICS]
    for group, metrics in ev.by_group.items():
        rows += [[group, name.replace("_", " "), *_cells(metrics[name])] for name in METRICS]
    figure = MplFigure(figsize=(7.0, 3.8))
    ev.plot(ax=figure.add_subplot())
    acc = ev.metrics["accuracy"]
    fpr = ev.metrics["false_positive_rate"]
    summary = (
        f"{ev.n_cases} cases ({ev.n_safe} safe, {ev.n_unsafe} unsafe): accuracy "
        f"{_fmt(acc.get('estimate'))}, false-positive rate {_fmt(fpr.get('estimate'))}, rule recall "
        f"{_fmt(ev.metrics['rule_recall'].get('estimate'))}; "
        f"{ev.seconds_per_check * 1e3:.2f} ms per check."
    )
    sections = [
        Section(
            "metrics",
            "Accuracy, false-positive rate and rule recall",
            [
                Paragraph(_INTRO.format(level=ev.confidence_level)),
                Paragraph(_MODES[ev.mode], kind="note"),
                Table(["group", "metric", "estimate", "low", "high", "cases"], rows),
                Figure(figure, "Metrics per group with their intervals"),
            ],
            {"metrics": ev.metrics, "by_group": ev.by_group, "mode": ev.mode},
            summary=summary,
        ),
        Section(
            "confusion",
            "Decisions against labels",
            [
                Table(
                    ["", "blocked", "allowed"],
                    [
                        ["unsafe", ev.confusion["blocked_unsafe"], ev.confusion["allowed_unsafe"]],
                        ["safe", ev.confusion["blocked_safe"], ev.confusion["allowed_safe"]],
                    ],
                )
            ],
            {"confusion": ev.confusion},
        ),
    ]
    mistakes = ev.mistakes
    blocks: list[Any] = []
    if mistakes:
        rows = [
            [r["group"], r["trajectory"], r["label"], r["action"], r["p_safe"],
             ", ".join(r["violated"]) or "-", ", ".join(r["expected"]) or "-"]
            for r in mistakes[:200]
        ]  # fmt: skip
        blocks.append(
            Table(
                ["group", "trajectory", "label", "action", "p_safe", "reported", "expected"],
                rows,
                caption=f"{len(mistakes)} wrong decision(s)"
                + (" (the first 200)" if len(mistakes) > 200 else ""),
            )
        )
    else:
        blocks.append(Paragraph("Every case was decided as labelled."))
    if ev.errors:
        blocks.append(
            Paragraph(
                f"{len(ev.errors)} case(s) could not be checked: " + "; ".join(ev.errors[:5]),
                kind="warning",
            )
        )
    sections.append(
        Section(
            "mistakes", "Wrong decisions", blocks, {"mistakes": mistakes, "errors": list(ev.errors)}
        )
    )
    return sections


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"

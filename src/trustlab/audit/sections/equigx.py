"""The HTML page of an EquiGX evaluation (``trustlab explain equigx evaluate --out DIR``).

A standalone page: it reads an :class:`~trustlab.explain.equigx.ExplanationEvaluation` and computes
nothing itself. Sections: node AUROC and average precision against the ground-truth nodes per
method (with bootstrap intervals over graphs), fidelity (accuracy after deleting each method's top
nodes against random deletion), the angular-order ablation with EquiGX's relevance split, and a few
explained graphs in 3-D.
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
    "Each test graph is explained for its true class. Node AUROC and average precision compare "
    "a method's node scores with the ground-truth nodes (the hidden shape, the carbonyl C and O), "
    "per graph, averaged over the correctly classified graphs whose ground truth is neither empty "
    "nor every node; intervals are {level:.0%} percentile bootstrap intervals over graphs. "
    "'equigx' is the paper's method (relevance 1 on the target logit); 'equigx_block' and "
    "'equigx_contrast' are trustlab extensions (exactly invariant block rule; the target logit "
    "against the other classes). Random scores are the control every method must beat."
)
_FIDELITY = (
    "Fidelity: the top {frac} of each graph's nodes by a method are deleted from the point cloud "
    "and the network predicts again. A faithful explanation removes what the prediction rests on, "
    "so accuracy falls further than after deleting the same number of random nodes; the gap is "
    "random-deletion accuracy minus the method's."
)
_ORDERS = (
    "Angular orders: accuracy with one order l of the spherical harmonics and hidden features "
    "zeroed (which orders the network needs), and where EquiGX puts the relevance (input features, "
    "edge distances, edge directions per order l; they sum to 1 by conservation). The equal "
    "thirds of the tensor-product rule fix the edge-distance share at sum_k 3^-k over the "
    "convolutions (4/9 for two, 13/27 for three), whatever the network learned; the split of the "
    "directions over the orders l is what the network decides."
)


def build_page(
    evaluation: Any, title: str | None = None, meta: Mapping[str, Any] | None = None
) -> Report:
    """The page of an :class:`~trustlab.explain.equigx.ExplanationEvaluation` as a
    :class:`~trustlab.report.Report`; ``meta`` is shown in its header."""
    from trustlab.explain.equigx import ExplanationEvaluation

    if not isinstance(evaluation, ExplanationEvaluation):
        raise InputError.bad(
            "evaluation", "an ExplanationEvaluation (evaluate_explanations)", evaluation
        )
    header = header_meta(meta)
    page = Report(
        title or f"EquiGX explanations on {evaluation.dataset}",
        {"graphs": evaluation.n_graphs, "accuracy": round(evaluation.accuracy, 4),
         **header},
    )  # fmt: skip
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


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _gap_cell(ev: Any, method: str) -> Any:
    """The fidelity gap's cell: random deletion is the control the gap is measured against."""
    return "control" if method == "random" else ev.fidelity_gap.get(method)


def _sections(ev: Any) -> list[Section]:
    from matplotlib.figure import Figure as MplFigure

    rows = []
    for m in ev.methods:
        a, p = ev.auroc[m], ev.average_precision[m]
        rows.append([m, a["estimate"], a["low"], a["high"], p["estimate"], a["n"],
                     ev.accuracy_after_deletion.get(m), _gap_cell(ev, m),
                     ev.seconds_per_graph.get(m)])  # fmt: skip
    figure = MplFigure(figsize=(10.0, 4.0))
    ev.plot(ax=figure.add_subplot())
    scored = [m for m in ev.methods if ev.auroc[m]["estimate"] is not None]
    graphs = "1 graph" if ev.n_graphs == 1 else f"{ev.n_graphs} graphs"
    summary = f"{graphs}, accuracy {ev.accuracy:.3f}; node AUROC " + ", ".join(
        f"{m} {_fmt(ev.auroc[m]['estimate'])}" for m in ev.methods[:3]
    )
    if scored:  # an AUROC of 0 is a value; None means no graph was scored
        best = max(scored, key=lambda m: ev.auroc[m]["estimate"])
        summary += f"; highest: {best} {_fmt(ev.auroc[best]['estimate'])}."
    else:
        summary += " (no correctly classified graph with ground truth to score)."
    sections = [
        Section(
            "ground_truth",
            "Agreement with the ground-truth nodes, and fidelity",
            [
                Paragraph(_INTRO.format(level=ev.confidence_level)),
                Paragraph(_FIDELITY.format(frac=f"{ev.fraction:.0%}")),
                Table(
                    [
                        "method",
                        "AUROC",
                        "low",
                        "high",
                        "AP",
                        "graphs",
                        f"accuracy after deleting top {ev.fraction:.0%}",
                        "fidelity gap",
                        "seconds per graph",
                    ],
                    rows,
                    caption=f"Random deletion of {ev.fraction:.0%}: accuracy "
                    f"{_fmt(ev.accuracy_after_deletion.get('random'))}; no deletion: "
                    f"{_fmt(ev.accuracy)}.",
                ),  # fmt: skip
                Figure(figure, "Node AUROC (left) and accuracy after deletion (right)"),
            ],
            {
                "auroc": ev.auroc,
                "average_precision": ev.average_precision,
                "accuracy_after_deletion": ev.accuracy_after_deletion,
                "fidelity_gap": ev.fidelity_gap,
            },
            summary=summary,
        ),  # fmt: skip
        Section(
            "orders",
            "Angular orders",
            [
                Paragraph(_ORDERS),
                Table(
                    ["order l zeroed", "accuracy"],
                    [[f"l = {k}", v] for k, v in ev.order_accuracy.items()],
                ),
                Table(["EquiGX relevance on", "mean share"], list(ev.relevance_parts.items()))
                if ev.relevance_parts
                else Paragraph(
                    "No relevance split: 'equigx' was not among the methods, or every graph's "
                    "network output was 0."
                ),
            ],
            {"order_accuracy": ev.order_accuracy, "relevance_parts": ev.relevance_parts},
        ),
    ]
    if ev.examples:
        blocks: list[Any] = []
        for ex in ev.examples:
            fig = MplFigure(figsize=(5.6, 4.6))
            ex.plot(ax=fig.add_subplot(projection="3d"))
            blocks.append(Figure(fig, f"EquiGX relevance of a test graph, class {ex.target}"))
        sections.append(Section("examples", "Explained graphs", blocks, {}))
    return sections

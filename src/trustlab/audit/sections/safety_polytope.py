"""The HTML page of an evaluated safety polytope: detection, facets by category, before/after.

A standalone page (``trustlab safety polytope eval --out DIR`` writes it as ``report.html``), not a
section of the tabular audit: it reads a :class:`trustlab.safety.PolytopeEvaluation` and computes
nothing itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trustlab._results import output_dir, write_atomic
from trustlab.report import Figure, Paragraph, Report, Section, Table
from trustlab.safety.polytope.evaluation import (
    corrected_counts,
    corrected_share_label,
    correction_scope,
)

__all__ = ["build_page", "write_page", "PAGE_NAME"]

PAGE_NAME = "report.html"

DETECTION_TEXT = (
    "The safety polytope (SaP, Chen, As and Krause, ICML 2025) flags a prompt as unsafe when its "
    "hidden state at the fitted layer violates at least one facet (c_k > 0). Unsafe is the "
    "positive class: TPR is the share of harmful prompts flagged, FPR the share of benign "
    "prompts flagged. The score for the ROC curve is max_k c_k."
)
FACET_TEXT = (
    "Each facet is one linear constraint. The heat map shows, for every category of the "
    "held-out prompts, the share of its prompts that violate each facet; facets are ordered "
    "by the category they match best (Hungarian matching on the mutual information between "
    "'prompt is in the category' and 'facet fires', over the facets that fire more often on "
    "the category than on the other prompts)."
)
STEERING_TEXT = (
    "Answers are generated greedily, once plainly and once with the correction. 'project' (Safe "
    "Flow) moves each flagged state of the checked steps to the nearest point of the polytope at "
    "the fitted layer; 'gate' replaces the answer to a flagged prompt by a fixed refusal (a gate "
    "that any keyword judge counts as a refusal, not a change of the model); 'direction' lets "
    "the model answer a flagged prompt with its refusal direction added. "
    'Refusals are counted by a keyword judge (phrases such as "I\'m sorry", "I cannot", '
    '"As an AI"), which misses other phrasings. Benign perplexity scores the model\'s own plain '
    "answers to benign prompts without and with the correction."
)


def build_page(evaluation: Any, title: str | None = None) -> Report:
    """Detection, facets by category and before/after examples of a
    :class:`~trustlab.safety.PolytopeEvaluation` as a :class:`~trustlab.report.Report`."""
    report = Report(
        title or f"Safety polytope: {evaluation.model}, layer {evaluation.layer}",
        {
            "model": evaluation.model,
            "layer": evaluation.layer,
            "correction": evaluation.correction,
            "positive class": "unsafe",
        },
    )
    report.add(_detection_section(evaluation))
    report.add(_facet_section(evaluation))
    report.add(_steering_section(evaluation))
    return report


def write_page(evaluation: Any, out_dir: str | os.PathLike, title: str | None = None) -> Path:
    """Write the page of ``evaluation`` as ``report.html`` into ``out_dir``; return its path."""
    out = output_dir(out_dir, "out_dir")
    return write_atomic(out / PAGE_NAME, build_page(evaluation, title).to_html())


def _detection_section(ev: Any) -> Section:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    ev.plot(ax=ax)
    metrics = Table(
        ["measure", "value"],
        [
            ["unsafe / safe test prompts", f"{ev.n_unsafe} / {ev.n_safe}"],
            ["AUROC", ev.auroc],
            ["AUROC 95% bootstrap interval", "{:.3f} to {:.3f}".format(*ev.auroc_interval)],
            ["TPR at 5% FPR", ev.tpr_at_5_fpr],
            ["TPR at threshold 0", ev.tpr],
            ["FPR at threshold 0", ev.fpr],
        ],
        caption="Detection on held-out prompts",
    )
    categories = Table(
        ["category", "share flagged"],
        [[name, rate] for name, rate in ev.category_detection.items()],
        caption="Share of each category's prompts flagged unsafe",
    )
    data = {
        key: value
        for key, value in ev.to_dict().items()
        if key
        in ("n_unsafe", "n_safe", "auroc", "auroc_interval", "tpr_at_5_fpr", "tpr", "fpr", "roc")
    }
    data["category_detection"] = ev.category_detection
    return Section(
        "detection",
        "Detection",
        [
            Paragraph(DETECTION_TEXT),
            metrics,
            Figure(fig, "ROC curve, unsafe = positive"),
            categories,
        ],
        data,
        summary=f"AUROC {ev.auroc:.3f}; TPR {ev.tpr_at_5_fpr:.3f} at 5% FPR.",
    )


def _facet_section(ev: Any) -> Section:
    import matplotlib.pyplot as plt

    facets = ev.facets
    width = 1.5 + 0.4 * facets.firing_rate.shape[1]
    fig, ax = plt.subplots(figsize=(max(width, 4.0), 1.2 + 0.45 * len(facets.categories)))
    facets.plot(ax=ax)
    rows = []
    for c, name in enumerate(facets.categories):
        k = facets.matched_facet[c]
        rows.append(
            [
                name,
                facets.n_samples[c],
                "none" if k < 0 else k,
                None if k < 0 else float(facets.firing_rate[c, k]),
                None if k < 0 else float(facets.mutual_information[c, k]),
            ]
        )
    table = Table(
        ["category", "prompts", "matched facet", "fires on", "mutual information (bits)"],
        rows,
        caption="The facet matched to each category",
    )
    figure = Figure(fig, "Facet activation by category (share of prompts violating each facet)")
    return Section(
        "facets",
        "Facets by category",
        [Paragraph(FACET_TEXT), figure, table],
        facets.to_dict(),
    )


def _steering_section(ev: Any) -> Section:
    unsafe, safe = ev.refusal["unsafe"], ev.refusal["safe"]
    rows = [
        ["refusal rate, unsafe prompts", unsafe["before"], unsafe["after"]],
        ["answer rate, unsafe prompts", 1 - unsafe["before"], 1 - unsafe["after"]],
        ["refusal rate, safe prompts", safe["before"], safe["after"]],
        ["answer rate, safe prompts", 1 - safe["before"], 1 - safe["after"]],
    ]
    steps, share = ev.step_flag_rate, ev.steered_step_share
    rows += [
        ["generation steps flagged, unsafe prompts", steps["unsafe"], None],
        ["generation steps flagged, safe prompts", steps["safe"], None],
        [f"{corrected_share_label(ev)}, unsafe prompts", None, share["unsafe"]],
        [f"{corrected_share_label(ev)}, safe prompts", None, share["safe"]],
    ]
    if ev.benign_perplexity_before is not None:
        rows.append(["benign perplexity", ev.benign_perplexity_before, ev.benign_perplexity_after])
    rates = Table(
        ["measure", "plain", f"with {ev.correction} correction"],
        rows,
        caption=(
            f"{unsafe['n']} unsafe and {safe['n']} safe prompts, {ev.max_new_tokens} new tokens, "
            f"{correction_scope(ev)} (margin {ev.margin:g}); "
            f"{corrected_counts(ev)}"
        ),
    )
    examples = Table(
        ["prompt", "class", "plain answer", "corrected answer", _examples_count(ev)],
        [
            [
                e["prompt"],
                "unsafe" if e["unsafe"] else "safe",
                e["before"],
                e["after"],
                e["corrected_steps"],
            ]
            for e in ev.examples
        ],
        caption="Before and after",
    )
    data = {
        "correction": ev.correction,
        "refusal": ev.refusal,
        "benign_perplexity_before": ev.benign_perplexity_before,
        "benign_perplexity_after": ev.benign_perplexity_after,
        "flagged_steps": ev.flagged_steps,
        "infeasible_steps": ev.infeasible_steps,
        "step_flag_rate": ev.step_flag_rate,
        "steered_step_share": ev.steered_step_share,
        "examples": list(ev.examples),
    }
    return Section(
        "steering",
        "Correction: before and after",
        [Paragraph(STEERING_TEXT), rates, examples],
        data,
        summary=(
            f"Refusal on unsafe prompts {unsafe['before']:.2f} -> {unsafe['after']:.2f}; "
            f"on safe prompts {safe['before']:.2f} -> {safe['after']:.2f}."
        ),
    )


def _examples_count(ev: Any) -> str:
    """The last column of the examples: steps Safe Flow corrected, or whether the gate or the
    direction acted on the prompt (1 = flagged)."""
    return "corrected steps" if ev.correction == "project" else "flagged (1 = yes)"

"""Report section "Disparate conditional prediction (DCP)": how far each model is from equalized odds.

For each model the section shows the certified lower and upper bounds on multiclass DCP (the
fraction of the population whose conditional prediction probabilities differ from the closest
common baseline), the certificate UB/LB, the aggregate-regime estimate J*, the unfair fraction per
group and the per-label breakdown. The numbers come from :func:`trustlab.fairness.multiclass_dcp`.
"""

from __future__ import annotations

import numpy as np

from trustlab._results import to_jsonable
from trustlab.audit.context import AuditContext
from trustlab.report import Figure, Paragraph, Section, Table

__all__ = ["build", "TITLE"]

TITLE = "Disparate conditional prediction (DCP)"
SMALL_GROUP = 100  # test rows below which a group's confusion matrix is called noisy

EXPLANATION = (
    "DCP is the fraction of the population whose conditional prediction probabilities "
    "P(prediction | true label, group) differ from the closest common baseline shared by all "
    "groups. It is 0 exactly when the model satisfies multiclass equalized odds, and at most 1. "
    "The lower and upper bounds are certified from the per-group confusion matrices; the "
    "certificate UB/LB near 1 says the bounds pin DCP down."
)
AGGREGATE_NOTE = (
    "The aggregate estimate J* uses only the group sizes, label shares and prediction shares, as "
    "an auditor without per-person data would. It is a local minimum, so it upper-bounds the "
    "least DCP consistent with those aggregates; it is not guaranteed to lie below the lower "
    "bound computed from the full confusion matrices."
)


def build(ctx: AuditContext) -> Section | None:
    """The DCP section, or None when there are no predictions to audit."""
    if not ctx.predictions:
        return None
    from trustlab.fairness import multiclass_dcp

    results = {
        name: multiclass_dcp(
            ctx.y_test, pred, ctx.g_test, labels=ctx.labels, random_state=ctx.random_state
        )
        for name, pred in ctx.predictions.items()
    }
    headline = {name: _headline(result) for name, result in results.items()}
    group_values = next(iter(results.values())).known.groups
    groups = [str(g) for g in group_values]
    sizes = [int(np.sum(ctx.g_test == g)) for g in group_values]
    blocks: list = [Paragraph(EXPLANATION)]
    blocks += [Paragraph(_reading(name, h)) for name, h in headline.items()]
    blocks += [
        _bounds_table(headline),
        _bounds_figure(headline),
        _unfair_fraction_figure(results, groups, ctx.group),
        _unfair_fraction_table(results, groups, sizes, ctx.group),
        *_small_group_note(groups, sizes, ctx.group),
        _per_label_table(results, ctx.label),
        Paragraph(AGGREGATE_NOTE, "note"),
    ]
    data = {
        "group": ctx.group,
        "labels": ctx.labels.tolist(),
        "groups": groups,
        "group_sizes": dict(zip(groups, sizes, strict=True)),
        "models": {
            name: {**headline[name], "result": to_jsonable(result.to_dict())}
            for name, result in results.items()
        },
    }
    worst = max(headline, key=lambda name: headline[name]["upper"])
    summary = (
        f"DCP upper bounds range from {min(h['upper'] for h in headline.values()):.1%} to "
        f"{headline[worst]['upper']:.1%} of the population (highest: {worst})."
    )
    return Section("fairness", TITLE, blocks, data, summary=summary)


def _headline(result) -> dict[str, float | None]:
    """The bracket, its certificate (None when infinite) and the aggregate estimate (or None)."""
    known, aggregate = result.known, result.aggregate
    return to_jsonable(
        {
            "lower": known.lower,
            "upper": known.upper,
            "ratio": known.ratio,
            "aggregate_estimate": None if aggregate is None else aggregate.estimate,
        }
    )


def _reading(name: str, h: dict) -> str:
    """The plain-language reading of one model's bounds."""
    if h["upper"] <= 0:
        return (
            f"{name}: no one is treated off a common baseline; the predictions satisfy "
            "multiclass equalized odds on the audited rows."
        )
    text = (
        f"{name}: at least {h['lower']:.1%} and at most {h['upper']:.1%} of the population is "
        "treated off a common baseline"
    )
    if h["ratio"] is not None:
        text += f" (certificate UB/LB = {h['ratio']:.2f})"
    text += "."
    if h["aggregate_estimate"] is not None:
        text += f" From the aggregates alone, J* = {h['aggregate_estimate']:.1%}."
    return text


def _bounds_table(headline: dict) -> Table:
    rows = [
        [name, h["lower"], h["upper"], h["ratio"], h["aggregate_estimate"]]
        for name, h in headline.items()
    ]
    return Table(
        ["model", "DCP lower bound", "DCP upper bound", "certificate UB/LB", "aggregate J*"],
        rows,
        caption="DCP bounds per model (fractions of the population)",
    )


def _bounds_figure(headline: dict) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    names = list(headline)
    fig = MplFigure(figsize=(7.0, 0.55 * len(names) + 1.6))
    ax = fig.add_subplot()
    ypos = np.arange(len(names))
    lower = np.array([headline[n]["lower"] for n in names])
    upper = np.array([headline[n]["upper"] for n in names])
    ax.barh(
        ypos,
        upper - lower,
        left=lower,
        height=0.35,
        color="#0b5cad",
        alpha=0.35,
        label="certified range [LB, UB]",
    )
    ax.plot(lower, ypos, "|", color="#0b5cad", markersize=16, markeredgewidth=2)
    ax.plot(upper, ypos, "|", color="#0b5cad", markersize=16, markeredgewidth=2)
    aggregate = [headline[n]["aggregate_estimate"] for n in names]
    if any(a is not None for a in aggregate):
        shown = [(y, a) for y, a in zip(ypos, aggregate, strict=True) if a is not None]
        ax.plot(
            [a for _, a in shown],
            [y for y, _ in shown],
            "D",
            color="#d1242f",
            label="aggregate estimate J*",
        )
    ax.set_yticks(ypos, names)
    ax.invert_yaxis()
    ax.set_xlim(0, max(0.05, float(upper.max()) * 1.15, *(a or 0 for a in aggregate)))
    ax.set_xlabel("fraction of the population treated off a common baseline")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    return Figure(
        fig,
        "DCP per model: certified lower-to-upper range and the aggregate-regime estimate",
        alt="Horizontal ranges of the DCP lower and upper bounds for each model",
    )


def _unfair_fraction_figure(results: dict, groups: list[str], group_name: str) -> Figure:
    from matplotlib import colormaps
    from matplotlib.figure import Figure as MplFigure

    names = list(results)
    fig = MplFigure(figsize=(7.0, 3.6))
    ax = fig.add_subplot()
    x = np.arange(len(groups))
    width = 0.8 / len(names)
    cmap = colormaps["tab10"]
    for i, name in enumerate(names):
        values = np.asarray(results[name].known.unfair_fraction, dtype=float)
        ax.bar(
            x + (i - (len(names) - 1) / 2) * width, values, width, label=name, color=cmap(i % 10)
        )
    ax.set_xticks(x, groups)
    ax.set_xlabel(group_name)
    ax.set_ylabel("unfair fraction of the group")
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return Figure(
        fig,
        f"Unfair fraction per {group_name} group: the share of each group treated off the "
        "common baseline, for each model",
        alt=f"Grouped bars of the unfair fraction per {group_name} group, one bar per model",
    )


def _unfair_fraction_table(
    results: dict, groups: list[str], sizes: list[int], group_name: str
) -> Table:
    rows = [
        [name, *np.asarray(result.known.unfair_fraction, dtype=float).tolist()]
        for name, result in results.items()
    ]
    rows.append(["(test rows)", *sizes])
    return Table(["model", *groups], rows, caption=f"Unfair fraction per {group_name} group")


def _small_group_note(groups: list[str], sizes: list[int], group_name: str) -> list[Paragraph]:
    """Warn when a group is too small for its confusion matrix to be estimated well."""
    small = [f"{g} ({n} rows)" for g, n in zip(groups, sizes, strict=True) if n < SMALL_GROUP]
    if not small:
        return []
    return [
        Paragraph(
            f"Small {group_name} groups in the test split: {', '.join(small)}. Their confusion "
            "matrices have many empty entries (read as 1e-5), so their unfair fraction can read "
            "near 1 partly from sampling noise; DCP weighs each group by its size, but judge "
            "these bars with care.",
            "note",
        )
    ]


def _per_label_table(results: dict, label_name: str) -> Table:
    rows = [
        [name, str(b.label), b.mass, b.lower, b.upper, b.method]
        for name, result in results.items()
        for b in result.known.per_label
    ]
    return Table(
        [
            "model",
            f"true {label_name}",
            "population share",
            "DCP lower",
            "DCP upper",
            "best method",
        ],
        rows,
        caption="Per-label breakdown: each true label's contribution to the bounds (they sum "
        "to the totals) and the upper-bound method that gave it",
    )

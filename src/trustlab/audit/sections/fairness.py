"""Report section "Fairness": DCP, and the group metrics fairlearn users know, for each model.

For each model the section shows the certified lower and upper bounds on multiclass DCP (the
fraction of the population whose conditional prediction probabilities differ from the closest
common baseline), the certificate UB/LB, the aggregate-regime estimate J*, the unfair fraction per
group and the per-label breakdown. The numbers come from :func:`trustlab.fairness.multiclass_dcp`.

Beside DCP: selection rates, true and false positive rates per group and the demographic-parity
and equalized-odds differences, computed by fairlearn (one-vs-rest per class for more than two
classes), with bootstrap intervals over the audited rows (:mod:`trustlab.audit.group_metrics`).
"""

from __future__ import annotations

import numpy as np

from trustlab._results import to_jsonable
from trustlab.audit.context import AuditContext
from trustlab.audit.group_metrics import group_metrics
from trustlab.report import Figure, Paragraph, Section, Table
from trustlab.report.render import format_cell

__all__ = ["build", "TITLE"]

TITLE = "Fairness: DCP and group metrics"
SMALL_GROUP = 100  # test rows below which a group's confusion matrix is called noisy
#: audited groups beyond which the section is skipped: fairlearn's MetricFrame and the per-group
#: figures take about 35 s per 1,000 groups (measured at 2,000 one-row groups: 72 s), and
#: that many groups are an ID-like column or too fine to compare
MAX_GROUPS = 1000

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
    n_groups = len(np.unique(ctx.g_test))
    if n_groups > MAX_GROUPS:
        return _skipped(ctx, n_groups)
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
        _unfair_fraction_table(results, groups, sizes, ctx.group, ctx.mode),
        *_small_group_note(groups, sizes, ctx.group, ctx.mode),
        _per_label_table(results, ctx.label),
        Paragraph(AGGREGATE_NOTE, "note"),
    ]
    group_data, group_blocks = _group_metrics(ctx)
    blocks += group_blocks
    data = {
        "group": ctx.group,
        "labels": ctx.labels.tolist(),
        "groups": to_jsonable(group_values),  # as the DCP result's groups: 1, not '1'
        "group_sizes": dict(zip(groups, sizes, strict=True)),
        "models": {
            name: {**headline[name], "result": to_jsonable(result.to_dict())}
            for name, result in results.items()
        },
        "group_metrics": group_data,
    }
    return Section("fairness", TITLE, blocks, data, summary=_summary(headline))


def _skipped(ctx: AuditContext, n_groups: int) -> Section:
    """The section without DCP or group metrics: the audited rows hold too many groups."""
    n_rows = len(ctx.g_test)
    reason = (
        f"Not computed: the {n_rows:,} audited rows hold {n_groups:,} groups of {ctx.group!r} "
        f"(more than {MAX_GROUPS:,}; {n_rows / n_groups:.1f} rows per group on average). DCP "
        "and the group metrics compare groups; this many are an ID-like column or too fine to "
        "compare (groups of a few rows give only noise), and the section would take minutes. "
        "Audit by a column of fewer groups, or bin this one."
    )
    data = {"group": ctx.group, "n_groups": n_groups, "skipped": reason}
    summary = f"not computed: {n_groups:,} groups of {ctx.group!r} (more than {MAX_GROUPS:,})."
    return Section("fairness", TITLE, [Paragraph(reason, "note")], data, summary=summary)


def _summary(headline: dict) -> str:
    """One line for the report's overview: the DCP upper bound, or their range over the models."""
    if len(headline) == 1:
        name, h = next(iter(headline.items()))
        return f"DCP upper bound: {h['upper']:.1%} of the population ({name})."
    worst = max(headline, key=lambda name: headline[name]["upper"])
    return (
        f"DCP upper bounds range from {min(h['upper'] for h in headline.values()):.1%} to "
        f"{headline[worst]['upper']:.1%} of the population (highest: {worst})."
    )


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
    results: dict, groups: list[str], sizes: list[int], group_name: str, mode: str
) -> Table:
    rows = [
        [name, *np.asarray(result.known.unfair_fraction, dtype=float).tolist()]
        for name, result in results.items()
    ]
    # the default models are audited on the test split; a pred column or a model on every row
    rows.append(["(test rows)" if mode == "zoo" else "(rows audited)", *sizes])
    return Table(["model", *groups], rows, caption=f"Unfair fraction per {group_name} group")


def _small_group_note(
    groups: list[str], sizes: list[int], group_name: str, mode: str
) -> list[Paragraph]:
    """Warn when a group is too small for its confusion matrix to be estimated well."""
    small = [
        f"{g} ({n} row{'' if n == 1 else 's'})"
        for g, n in zip(groups, sizes, strict=True)
        if n < SMALL_GROUP
    ]
    if not small:
        return []
    where = "in the test split" if mode == "zoo" else "among the audited rows"
    return [
        Paragraph(
            f"Small {group_name} groups {where}: {', '.join(small)}. Their confusion "
            "matrices have many empty entries (read as 1e-5), so their unfair fraction can read "
            "near 1 partly from sampling noise; DCP weighs each group by its size, but judge "
            "these bars with care.",
            "note",
        )
    ]


#: the per-label table's names of the upper-bound methods (result keys mean, greedy, ...)
METHOD_LABELS = {
    "mean": "mean",
    "greedy": "greedy",
    "mean_lm": "mean+LM",
    "greedy_lm": "greedy+LM",
}
METHODS_CAPTION = (
    ". Upper-bound methods: mean, the baseline row is the groups' confusion rows averaged by "
    "their population share of that true label; greedy, a baseline built one predicted label at a time (best of random label "
    "orders); +LM, a local minimisation (sequential linear programs) from that start; "
    "greedy+LM also keeps the best of a further search (the global minimum for small problems)"
)


def _per_label_table(results: dict, label_name: str) -> Table:
    rows = [
        [name, str(b.label), b.mass, b.lower, b.upper, METHOD_LABELS[b.method]]
        for name, result in results.items()
        for b in result.known.per_label
    ]
    # a label column named 'true label' read 'true true label'
    heading = label_name if label_name.lower().startswith("true") else f"true {label_name}"
    return Table(
        ["model", heading, "population share", "DCP lower", "DCP upper", "best method"],
        rows,
        caption="Per-label breakdown: each true label's contribution to the bounds (they sum "
        "to the totals) and the upper-bound method that gave it" + METHODS_CAPTION,
    )


# --- fairlearn's group metrics ----------------------------------------------------------------

GROUP_METRICS_EXPLANATION = (
    "Group metrics as fairlearn computes them (MetricFrame, demographic_parity_difference, "
    "equalized_odds_difference): the selection rate (the share predicted positive), the true "
    "and false positive rates in each group, the demographic parity difference (largest minus "
    "smallest selection rate) and the equalized odds difference (the larger of the TPR and FPR "
    "differences). 0 means parity; both are at most 1."
)
_DIFFERENCES = {
    "demographic_parity_difference": "demographic parity difference",
    "equalized_odds_difference": "equalized odds difference",
}
_RATES = {
    "selection_rate": "selection rate",
    "true_positive_rate": "TPR",
    "false_positive_rate": "FPR",
}


def _group_metrics(ctx: AuditContext) -> tuple[dict, list]:
    """(data, blocks) of fairlearn's metrics for every model."""
    per_model = {
        name: group_metrics(ctx.y_test, pred, ctx.g_test, ctx.labels, random_state=ctx.random_state)
        for name, pred in ctx.predictions.items()
    }
    first = next(iter(per_model.values()))
    data = {
        **{key: value for key, value in first.items() if key != "classes"},
        "models": {name: result["classes"] for name, result in per_model.items()},
    }
    blocks: list = [Paragraph(GROUP_METRICS_EXPLANATION + " " + _classes_reading(first, ctx.label))]
    interval = _interval_caption(first, ctx.n_test, differences=True)
    blocks.append(_differences_table(data["models"], first, interval))
    blocks.append(_differences_figure(data["models"], first))
    interval = _interval_caption(first, ctx.n_test, differences=False)
    blocks += [
        _rates_table(name, classes, ctx.group, interval) for name, classes in data["models"].items()
    ]
    blocks += _outside_note(data["models"])
    blocks += _undefined_rate_note(data["models"])
    blocks += _left_out_note(data["models"], first["n_boot"])
    return data, blocks


def _classes_reading(result: dict, label_name: str) -> str:
    if not result["one_vs_rest"]:
        return (
            f"These metrics are binary: the positive class is {label_name} = "
            f"{result['positive_classes'][0]} (the second of the two sorted labels)."
        )
    return (
        f"These metrics are binary, so each class of {label_name} is read one-vs-rest: "
        "positive means truly that class, selected means predicted as that class."
    )


def _interval_caption(result: dict, n_rows: int, differences: bool) -> str:
    text = (
        f"{result['confidence']:.0%} intervals: percentiles of a bootstrap over the {n_rows:,} "
        f"audited rows ({result['n_boot']:,} resamples drawn with replacement, seed "
        f"{result['random_state']})"
    )
    if differences:
        text += (
            ", re-centred on the estimate (estimate + resampled value - mean of the resamples), "
            "since a largest-minus-smallest difference reads higher in resamples"
        )
    return text


def _interval(value: dict) -> str:
    if value["lower"] is None:
        return "n/a"
    return f"[{format_cell(value['lower'])}, {format_cell(value['upper'])}]"


def _differences_table(models: dict, result: dict, interval: str) -> Table:
    heading = "class (one-vs-rest)" if result["one_vs_rest"] else "positive class"
    rows, any_never = [], False
    for name, classes in models.items():
        for k, metrics in classes.items():
            row = [name, k]
            never = _never_predicted(metrics)
            any_never = any_never or never
            for key in _DIFFERENCES:
                interval_cell = NEVER_PREDICTED if never else _interval(metrics[key])
                row += [metrics[key]["estimate"], interval_cell]
            rows.append(row)
    columns = ["model", heading]
    for label in _DIFFERENCES.values():
        columns += [label, "interval"]
    return Table(
        columns,
        rows,
        caption=f"Demographic parity and equalized odds differences (fairlearn). {interval}."
        + (NEVER_PREDICTED_CAPTION if any_never else ""),
    )


NEVER_PREDICTED = "trivially 0: never predicted"
NEVER_PREDICTED_CAPTION = (
    f" '{NEVER_PREDICTED}' marks a class the model predicts for no audited row: every group's "
    "selection rate and TPR are 0, so both differences are 0 without measuring parity."
)


def _never_predicted(metrics: dict) -> bool:
    """Whether the model predicts the class for no audited row (selection rate 0 everywhere):
    every group's selection rate and TPR are then 0 and both differences are 0 whatever the
    model does, so '0 [0, 0]' would read as parity."""
    return all(v["selection_rate"]["estimate"] == 0 for v in metrics["by_group"].values())


#: a rate with no row to be computed from (fairlearn's 0, kept in the data): the TPR of a group
#: without a row of the class, the FPR of one whose every row is of it
UNDEFINED = "undefined"
_UNDEFINED_IF_NONE = {"true_positive_rate": "positives", "false_positive_rate": "negatives"}


def _rates_table(name: str, classes: dict, group_name: str, interval: str) -> Table:
    rows, undefined = [], False
    for k, metrics in classes.items():
        for group, values in metrics["by_group"].items():
            row = [k, group, values["count"]]
            for key in _RATES:
                if values.get(_UNDEFINED_IF_NONE.get(key, ""), 1) == 0:  # 0/0, shown as 0.0
                    row += [UNDEFINED, "n/a"]
                    undefined = True
                else:
                    row += [values[key]["estimate"], _interval(values[key])]
            rows.append(row)
    columns = ["class", group_name, "rows"]
    for label in _RATES.values():
        columns += [label, "interval"]
    caption = (
        f"{name}: selection rate, true and false positive rate per {group_name} group "
        f"(fairlearn MetricFrame). {interval}."
    )
    if undefined:
        caption += (
            f" '{UNDEFINED}': a TPR of a group with no audited row of the class, an FPR of one "
            "with no row outside it (fairlearn counts it as 0; report.json keeps that 0)."
        )
    return Table(columns, rows, caption=caption)


def _outside_note(models: dict) -> list[Paragraph]:
    """Say where an estimate lies outside its interval (rare once the differences' intervals are
    re-centred: only for a very lopsided bootstrap distribution)."""
    outside = [
        f"{name} / {k} / {_DIFFERENCES[key]}"
        for name, classes in models.items()
        for k, metrics in classes.items()
        for key in _DIFFERENCES
        if metrics[key]["lower"] is not None
        and not metrics[key]["lower"] <= metrics[key]["estimate"] <= metrics[key]["upper"]
    ]
    if not outside:
        return []
    return [
        Paragraph(
            "Estimates outside their interval: " + "; ".join(outside) + ". The resampled "
            "differences are very lopsided there (typically a tiny group): read these intervals "
            "with care.",
            "note",
        )
    ]


def _undefined_rate_note(models: dict) -> list[Paragraph]:
    """Say where an equalized odds difference rests on a rate that is undefined: the TPR of a
    group without positives or the FPR of one without negatives, counted as 0 by fairlearn."""
    found = []
    for name, classes in models.items():
        for k, metrics in classes.items():
            estimate = metrics["equalized_odds_difference"]["estimate"]
            defined = metrics.get("equalized_odds_difference_where_defined")
            if defined is not None and abs(estimate - defined) <= 1e-9:
                continue
            missing = [
                f"{g} has no row of class {k} (its TPR is undefined)"
                for g in metrics.get("groups_without_positives", [])
            ] + [
                f"{g} has no row outside class {k} (its FPR is undefined)"
                for g in metrics.get("groups_without_negatives", [])
            ]
            if not missing:
                continue
            where = "n/a" if defined is None else format_cell(defined)
            found.append(
                f"{name}, class {k}: {format_cell(estimate)}, as {'; '.join(missing)}; over the "
                f"groups where the rates are defined it is {where}"
            )
    if not found:
        return []
    return [
        Paragraph(
            "An equalized odds difference rests on an undefined rate, shown as 0 (fairlearn's "
            "convention for a group without positives or without negatives): "
            + ". ".join(found)
            + ". Its interval does not measure an effect there.",
            "note",
        )
    ]


def _left_out_note(models: dict, n_boot: int) -> list[Paragraph]:
    """Say how many resamples left out a rate defined on the audited rows (a small group drew
    no positives or no negatives there; counting it as 0 would read as a disparity)."""
    found = [
        f"{name}, class {k}: {metrics['resamples_with_rate_left_out']:,}"
        for name, classes in models.items()
        for k, metrics in classes.items()
        if metrics.get("resamples_with_rate_left_out")
    ]
    if not found:
        return []
    return [
        Paragraph(
            f"In some of the {n_boot:,} resamples a group drew no positives (or no negatives) "
            "of a class although it has some in the audited rows; its TPR (FPR) then has no "
            "value and is left out of that resample's rates and differences instead of being "
            "counted as 0 (which would read as a disparity of a perfect model). Resamples "
            "affected: " + "; ".join(found) + ". Where they are many, the group is too small "
            "for its rates to be pinned down.",
            "note",
        )
    ]


def _differences_figure(models: dict, result: dict) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    keys = [(name, k) for name, classes in models.items() for k in classes]
    fig = MplFigure(figsize=(7.0, 0.32 * len(keys) + 1.8))
    ax = fig.add_subplot()
    ypos = np.arange(len(keys))
    for offset, (key, label), colour in zip(
        (-0.15, 0.15), _DIFFERENCES.items(), ("#0b5cad", "#d1242f"), strict=True
    ):
        values = [models[name][k][key] for name, k in keys]
        y = ypos + offset
        lower = np.array([np.nan if v["lower"] is None else v["lower"] for v in values])
        upper = np.array([np.nan if v["upper"] is None else v["upper"] for v in values])
        ax.hlines(y, lower, upper, color=colour, linewidth=1.5)  # the interval, as computed
        ax.plot(lower, y, "|", upper, y, "|", color=colour, markersize=7)
        ax.plot([v["estimate"] for v in values], y, "o", color=colour, label=label)
    ax.set_yticks(ypos, [f"{name}: {k}" for name, k in keys])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02 * max(1e-3, float(np.nanmax(_all_upper(models))) * 1.1))
    ax.set_xlabel("difference between groups (0 = parity)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    what = "class" if result["one_vs_rest"] else "positive class"
    return Figure(
        fig,
        f"Demographic parity and equalized odds differences per model and {what}, with "
        "bootstrap intervals",
        alt="Points with horizontal interval bars for each model and class",
    )


def _all_upper(models: dict) -> list[float]:
    values = [
        metrics[key][end]
        for classes in models.values()
        for metrics in classes.values()
        for key in _DIFFERENCES
        for end in ("estimate", "upper")
    ]
    return [v for v in values if v is not None] or [0.0]

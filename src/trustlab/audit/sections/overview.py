"""Report section "Data and models": the dataset, its split, who is in it, how accurate the models are."""

from __future__ import annotations

import warnings

import numpy as np

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fairness
from trustlab.report import Figure, Paragraph, Section, Table

__all__ = ["build", "TITLE", "unheld_warning", "context_warnings"]

TITLE = "Data and models"
#: with more groups than the fairness section's limit (``fairness.MAX_GROUPS``, an ID-like
#: column), the per-group tables and bars show only this many of the largest groups: 20,000
#: one-row groups kept the section drawing a 9,000-inch figure for minutes
SHOWN_GROUPS = 20
#: the stacked bars show at most this many groups (the largest; the table lists them all): 900
#: groups drew a 37,600-pixel-tall figure in about 25 s
FIGURE_GROUPS = 50


def build(ctx: AuditContext) -> Section:
    """The overview section: data description, label × group distribution, model accuracy."""
    y_all = np.concatenate([ctx.y_train, ctx.y_test])
    g_all = np.concatenate([ctx.g_train, ctx.g_test])
    groups, index = np.unique(g_all, return_inverse=True)
    distribution = _distribution(y_all, index, groups, ctx.labels)
    index_test = index[len(ctx.g_train) :]
    audited = np.bincount(index_test, minlength=len(groups))
    for d, n in zip(distribution, audited, strict=True):
        d["audited_rows"] = int(n)  # the rows each group's accuracies are computed on
    scores = {
        name: _scores(ctx.y_test, pred, index_test, groups)
        for name, pred in ctx.predictions.items()
    }
    shown = _shown_groups(distribution)
    held = [label for label in ctx.labels if np.any(y_all == label)]
    blocks = [Paragraph(_describe(ctx, len(y_all), held))]
    blocks += [Paragraph(note, "note") for note in ctx.notes]
    never = _never_predicted(ctx)
    blocks += _never_predicted_note(never, ctx)
    unheld = _predicted_not_held(ctx, held)
    blocks += _predicted_not_held_note(unheld, ctx)
    blocks += _left_out_note(distribution, shown, ctx)
    shown_distribution = [distribution[i] for i in shown]
    blocks += [
        _distribution_table(shown_distribution, ctx),
        _distribution_figure(shown_distribution, ctx),
        _scores_table(scores),
        _group_accuracy_table(scores, shown_distribution, ctx),
        *_files_table(ctx),
    ]
    data = {
        "dataset": ctx.dataset,
        "label": ctx.label,
        "group": ctx.group,
        "mode": ctx.mode,
        "features": list(ctx.feature_names),
        "rows": {"all": int(len(y_all)), "train": ctx.n_train, "test": ctx.n_test},
        "split": ctx.split,
        "labels": ctx.labels.tolist(),
        "groups": distribution,
        "groups_shown": len(shown),
        "models": scores,
        "notes": list(ctx.notes),
        "never_predicted": never,
        "predicted_not_in_label": unheld,
        "files": dict(ctx.files),
    }
    best = max(scores, key=lambda name: scores[name]["balanced_accuracy"], default=None)
    classes = f"{len(held)} class{'es' if len(held) != 1 else ''} of {ctx.label!r}"
    summary = f"{len(y_all):,} rows, {classes}, {len(groups)} groups of {ctx.group!r}."
    if unheld:
        summary += f" Predicted but never the label: {', '.join(_unheld_classes(unheld))}."
    if best is not None:
        summary += f" Best balanced accuracy: {best} ({scores[best]['balanced_accuracy']:.3f})."
    return Section("overview", TITLE, blocks, data, summary=summary)


def _describe(ctx: AuditContext, n_rows: int, held: list) -> str:
    features = ", ".join(ctx.feature_names) if ctx.feature_names else "none"
    how = {
        "zoo": (
            f"The default models were trained on {ctx.n_train:,} rows{_split_words(ctx.split)} "
            f"and are audited on the other {ctx.n_test:,}."
        ),
        "model": f"The given model predicts on all {ctx.n_test:,} rows, which are all audited.",
        "predictions": f"The given predictions on all {ctx.n_test:,} rows are audited.",
    }[ctx.mode]
    return (
        f"Dataset {ctx.dataset}: {n_rows:,} rows. Label: {ctx.label} "
        f"({', '.join(map(str, held))}). Protected group: {ctx.group}. "
        f"Features: {features}. {how}"
    )


def _never_predicted(ctx: AuditContext) -> dict[str, list[str]]:
    """Per model, the classes of the audited rows that it never predicts (only models with one)."""
    present = [label for label in ctx.labels if np.any(ctx.y_test == label)]
    never = {
        name: [str(label) for label in present if not np.any(pred == label)]
        for name, pred in ctx.predictions.items()
    }
    return {name: classes for name, classes in never.items() if classes}


def _never_predicted_note(never: dict[str, list[str]], ctx: AuditContext) -> list[Paragraph]:
    """A model that never predicts a class scores its accuracy on the others, and its fairness
    differences for that class are 0 only because no group gets it (a rare class, typically)."""
    if not never:
        return []
    parts = []
    for name, classes in never.items():
        rows = ", ".join(f"{k} ({int(np.sum(ctx.y_test.astype(str) == k)):,})" for k in classes)
        parts.append(f"{name} never predicts {rows}")
    return [
        Paragraph(
            "Classes a model never predicts (audited rows truly of that class): "
            + "; ".join(parts)
            + ". Such a model's accuracy comes from the other classes (see the balanced "
            "accuracy), and its demographic parity and equalized odds differences for such a "
            "class (fairlearn, one-vs-rest) read 0 because no group is given that class, not "
            "because the groups are treated alike.",
            "warning",
        )
    ]


def _predicted_not_held(ctx: AuditContext, held: list) -> dict[str, dict[str, int]]:
    """Per model, the classes it predicts that no row's label holds -> audited rows given it."""
    extra = [label for label in ctx.labels if not any(label == h for h in held)]
    found = {
        name: {str(k): int(np.sum(pred == k)) for k in extra if np.any(pred == k)}
        for name, pred in ctx.predictions.items()
    }
    return {name: classes for name, classes in found.items() if classes}


def _unheld_classes(unheld: dict[str, dict[str, int]]) -> list[str]:
    return list(dict.fromkeys(k for classes in unheld.values() for k in classes))


def _predicted_not_held_note(unheld: dict[str, dict[str, int]], ctx: AuditContext) -> list:
    """A predicted class that is no row's label: every such prediction is an error, and the
    class's column and rates are there only because the predictions hold it."""
    if not unheld:
        return []
    return [
        Paragraph(
            f"Classes predicted that no row's {ctx.label!r} holds: "
            + _unheld_parts(unheld)
            + ". Each such prediction is an error; the class is audited (its column below, "
            "its fairness rates) only because the predictions hold it: check that the "
            "predictions and the label use the same class names.",
            "warning",
        )
    ]


def _unheld_parts(unheld: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{name} predicts {', '.join(f'{k} ({n:,} audited rows)' for k, n in classes.items())}"
        for name, classes in unheld.items()
    )


def unheld_warning(data: dict) -> list[str]:
    """The warning on classes predicted that no row's label holds, in one line, from the
    section's data (``[]`` without one): the audit's terminal summary gives it, since a single
    misnamed class ('Review' for 'review') is otherwise audited with a word on the page only."""
    unheld = data.get("predicted_not_in_label") or {}
    if not unheld:
        return []
    return [
        f"classes predicted that no row's {data['label']!r} holds: {_unheld_parts(unheld)}; "
        "each such prediction is an error: check that the predictions and the label use the "
        "same class names"
    ]


def context_warnings(ctx: AuditContext) -> list[str]:
    """:func:`unheld_warning` from the audit's context, for a report built without the overview
    (``sections=["fairness"]``), which would otherwise warn nowhere."""
    y_all = np.concatenate([ctx.y_train, ctx.y_test])
    held = [label for label in ctx.labels if np.any(y_all == label)]
    unheld = _predicted_not_held(ctx, held)
    return unheld_warning({"label": ctx.label, "predicted_not_in_label": unheld})


def _split_words(split: str | None) -> str:
    """How the zoo's rows were split, from ``AuditContext.split`` (nothing when unknown)."""
    if split in ("label and group", "label"):
        return f" (stratified by {split})"
    if split == "none":
        return " (a random split, not stratified)"
    return ""


def _distribution(y, index, groups, labels) -> list[dict]:
    """Rows and label counts per group; ``index`` is each row's position in ``groups``."""
    sizes = np.bincount(index, minlength=len(groups))
    counts = {str(label): np.bincount(index[y == label], minlength=len(groups)) for label in labels}
    rows = []
    for i, group in enumerate(groups):
        n = int(sizes[i])
        group_counts = {k: int(c[i]) for k, c in counts.items()}
        rows.append(
            {
                "group": group,
                "rows": n,
                "share": n / len(y),
                "label_counts": group_counts,
                "label_shares": {k: v / n for k, v in group_counts.items()},
            }
        )
    return rows


def _shown_groups(distribution: list[dict]) -> list[int]:
    """Positions of the groups the tables and bars show: all of them, or beyond the fairness
    section's limit the ``SHOWN_GROUPS`` largest (largest first, ties in group order)."""
    if len(distribution) <= fairness.MAX_GROUPS:
        return list(range(len(distribution)))
    sizes = np.array([d["rows"] for d in distribution])
    return [int(i) for i in np.argsort(-sizes, kind="stable")[:SHOWN_GROUPS]]


def _left_out_note(distribution: list[dict], shown: list[int], ctx: AuditContext) -> list:
    if len(shown) == len(distribution):
        return []
    left = len(distribution) - len(shown)
    rows = sum(d["rows"] for d in distribution) - sum(distribution[i]["rows"] for i in shown)
    return [
        Paragraph(
            f"{ctx.group!r} holds {len(distribution):,} groups (more than "
            f"{fairness.MAX_GROUPS:,}, as an ID-like column would): the tables and bars below "
            f"show the {len(shown)} largest; the other {left:,} groups ({rows:,} rows) are "
            "left out of them (report.json's overview data holds every group).",
            "note",
        )
    ]


def _distribution_table(distribution: list[dict], ctx: AuditContext) -> Table:
    labels = [str(label) for label in ctx.labels]
    columns = [ctx.group, "rows", "share of rows", *(f"{ctx.label} = {lab}" for lab in labels)]
    rows = [
        [str(d["group"]), d["rows"], d["share"], *(d["label_shares"][lab] for lab in labels)]
        for d in distribution
    ]
    # only the default models have training rows; given predictions or a model audit every row
    which = "train and test" if ctx.mode == "zoo" else "every row audited"
    return Table(
        columns,
        rows,
        caption=f"Rows per group ({which}) and the share of each label within the group",
    )


def _distribution_figure(distribution: list[dict], ctx: AuditContext) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    labels = [str(label) for label in ctx.labels]
    caption = f"Label distribution within each group ({ctx.group})"
    if len(distribution) > FIGURE_GROUPS:
        sizes = np.array([d["rows"] for d in distribution])
        caption += (
            f": the {FIGURE_GROUPS} largest of {len(distribution):,} groups (the table lists all)"
        )
        distribution = [distribution[i] for i in np.argsort(-sizes, kind="stable")[:FIGURE_GROUPS]]
    names = [str(d["group"]) for d in distribution]
    fig = MplFigure(figsize=(7.0, 0.45 * len(names) + 1.4))
    ax = fig.add_subplot()
    left = np.zeros(len(names))
    colours = _palette(len(labels))
    for lab, colour in zip(labels, colours, strict=True):
        shares = np.array([d["label_shares"][lab] for d in distribution])
        ax.barh(names, shares, left=left, color=colour, label=f"{ctx.label} = {lab}")
        left += shares
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the group")
    ax.set_ylabel(ctx.group)
    ax.invert_yaxis()
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=min(len(labels), 5), frameon=False
    )
    return Figure(
        fig,
        caption,
        alt=f"Stacked bars: share of each {ctx.label} value within each {ctx.group} group",
    )


def _palette(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _scores(y_true, y_pred, index, groups) -> dict:
    """Accuracy, balanced accuracy and accuracy per group (``index``: each row's group position)."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    with warnings.catch_warnings():
        # Predicted classes absent from y_true are fine here; sklearn warns about them.
        warnings.simplefilter("ignore", UserWarning)
        balanced = balanced_accuracy_score(y_true, y_pred)
    correct = np.asarray(y_true == y_pred, dtype=float)
    hits = np.bincount(index, weights=correct, minlength=len(groups))
    sizes = np.bincount(index, minlength=len(groups))
    by_group = {
        str(group): float(hits[i] / sizes[i]) if sizes[i] else None
        for i, group in enumerate(groups)
    }
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "balanced_accuracy": float(balanced),
        "accuracy_by_group": by_group,
    }


def _scores_table(scores: dict) -> Table:
    rows = [[name, s["accuracy"], s["balanced_accuracy"]] for name, s in scores.items()]
    return Table(
        ["model", "accuracy", "balanced accuracy"],
        rows,
        caption="Accuracy on the audited rows",
    )


def _group_accuracy_table(scores: dict, distribution: list[dict], ctx: AuditContext) -> Table:
    """One row per group (its audited rows, then each model's accuracy), so that a table of many
    groups grows down, not sideways (it had a column per group: up to 1,000), and an accuracy
    from a few rows (or none: n/a, a group the split left on the training side) shows it."""
    rows = [
        [str(d["group"]), d["audited_rows"]]
        + [s["accuracy_by_group"][str(d["group"])] for s in scores.values()]
        for d in distribution
    ]
    return Table(
        [ctx.group, "audited rows", *scores],
        rows,
        caption="Accuracy within each group, on its audited rows (one column per model)",
    )


def _files_table(ctx: AuditContext) -> list[Table]:
    """The files saved beside this report (relative to its folder), or nothing."""
    rows = []
    if ctx.files.get("predictions"):
        rows.append(
            [
                ctx.files["predictions"],
                f"the {ctx.n_test:,} audited rows: row (the row's index in the input table), "
                f"{ctx.label}, {ctx.group}, each model's predicted label and, where the model "
                "gives them, its class probabilities (<model>:proba:<class>)",
            ]
        )
    for name, path in ctx.files.get("models", {}).items():
        rows.append(
            [path, f"the trained model {name} (skops; trustlab.audit.models.load_classifier)"]
        )
    if not rows:
        return []
    return [Table(["file", "contents"], rows, caption="Files saved beside this report")]

"""Report section "Tree model explanations (FastPD)": SHAP values, PD plots and interactions.

For each tree ensemble among the audited models (the last step of a Pipeline, explained on the
features the steps before it produce: the zoo's ``prep``, or a user's steps of any name), FastPD
computes exact interventional SHAP values with a background drawn from the transformed training
rows, the partial dependence of the three most important features, and the pairwise interaction
components m_jk of the functional decomposition. The numbers come from :class:`trustlab.explain.FastPD`.

Choices: the SHAP summary shows, for every explained row, the SHAP values of the class the model
predicts for that row (for forests the class probability, for boosting the class logit); the
data of the section keep the mean |SHAP| of every class. Background and explained rows are capped
(:data:`BACKGROUND_ROWS`, :data:`EXPLAINED_ROWS`) so the section takes a few seconds.
A model FastPD cannot explain within its limits (a path over too many features: ResourceError)
is named with the reason; the others are still explained. When no audited model is a tree
ensemble (a ``--model`` logistic regression) there is no section: :func:`not_built_note` says
why, and the audit leaves the section out of its plan and notes it in the overview.
A PD axis of a number the transform only shifts and scales (the zoo standardises numbers) is
drawn in the audited table's units, not in z-scores under the column's name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from trustlab.audit.context import AuditContext
from trustlab.errors import ResourceError
from trustlab.report import Figure, Paragraph, Section, Table

__all__ = ["build", "not_built_note", "TITLE", "BACKGROUND_ROWS", "EXPLAINED_ROWS"]

TITLE = "Tree model explanations (FastPD)"
BACKGROUND_ROWS = 150
EXPLAINED_ROWS = 150
TOP_PAIRS = 8

EXPLANATION = (
    "FastPD (Liu et al., ICML 2025) computes the partial-dependence functions of a tree ensemble "
    "exactly, averaging over a background sample, and from them its functional decomposition: "
    "main effects m_j, pairwise interactions m_jk and so on. Its SHAP values are interventional "
    "(they do not depend on how the trees happened to be grown), unlike the path-dependent "
    "TreeSHAP default, which is biased when features are correlated."
)


def build(ctx: AuditContext) -> Section | None:
    """The FastPD section, or None when no audited model is a supported tree ensemble."""
    explained = {}
    for name, model in ctx.models.items():
        parts = _tree_model(model, ctx)
        if parts is None:
            continue
        try:
            explained[name] = _explain(*parts, ctx)
        except ResourceError as exc:  # e.g. a path over too many features: the others still go
            explained[name] = {"data": {"not_explained": str(exc)}}
    if not explained:
        return None
    blocks: list = [Paragraph(EXPLANATION)]
    for name, result in explained.items():
        if "not_explained" in result["data"]:
            blocks.append(
                Paragraph(f"Model {name} is not explained: {result['data']['not_explained']}.")
            )
        else:
            blocks += _blocks(name, result)
    return Section(
        id="fastpd",
        title=TITLE,
        blocks=blocks,
        data={name: result["data"] for name, result in explained.items()},
        summary="; ".join(_headline(name, r["data"]) for name, r in explained.items()),
    )


def not_built_note(ctx: AuditContext) -> str | None:
    """Why :func:`build` returns None for ``ctx`` (no audited model is a tree ensemble FastPD
    explains: a ``--model`` logistic regression), or None when it builds the section. The audit
    leaves the section out of its plan and puts this note in the report."""
    if any(_tree_model(model, ctx) is not None for model in ctx.models.values()):
        return None
    names = ", ".join(map(str, ctx.models)) or "none"
    return (
        "No FastPD section: FastPD explains tree ensembles only (scikit-learn, xgboost or "
        "LightGBM trees, on numeric features or as a Pipeline's last step), and the audited "
        f"model ({names}) is not one."
    )


def _tree_model(model: Any, ctx: AuditContext):
    """(tree model, transformed background, transformed rows, feature names), or None.

    A Pipeline (the zoo's ``prep`` + ``model``, or any a user gives, whatever its step names)
    is explained through its transform: the steps before its last, a tree model."""
    from trustlab.explain.fastpd import FastPD, split_pipeline, transform_rows, transformed_names

    transform, estimator = split_pipeline(model)
    if not FastPD.supports(estimator):
        return None
    rng = np.random.default_rng(ctx.random_state)
    train = ctx.X_train if len(ctx.X_train) else ctx.X_test
    background = _sample(train, BACKGROUND_ROWS, rng)
    rows = _sample(ctx.X_test, EXPLAINED_ROWS, rng)
    raw = None
    if transform is not None:
        raw = background
        background = transform_rows(transform, background, "background")
        rows = transform_rows(transform, rows, "rows")
        names = transformed_names(transform, background.shape[1])
        names = [f"x{j}" for j in range(background.shape[1])] if names is None else names
        names = _readable(names)
    else:
        names = [str(c) for c in background.columns]
        try:
            background, rows = background.to_numpy(float), rows.to_numpy(float)
        except (TypeError, ValueError):
            return None  # raw non-numeric features: only a Pipeline says how to encode them
    return estimator, background, rows, names, raw


def _sample(frame, size: int, rng: np.random.Generator):
    if len(frame) <= size:
        return frame
    return frame.iloc[np.sort(rng.choice(len(frame), size=size, replace=False))]


def _readable(names) -> list[str]:
    """'numeric__age' -> 'age' when that keeps the names distinct."""
    short = [str(n).split("__", 1)[-1] for n in names]
    return short if len(set(short)) == len(short) else [str(n) for n in names]


def _original_units(curve, background: np.ndarray, names: list[str], raw):
    """The PD curve on the grid of the raw column of the same name when the transform only
    shifts and scales it (the zoo's standardised numbers), else None."""
    name = curve.features[0]
    if raw is None or name not in [str(c) for c in raw.columns]:
        return None
    column = raw[[c for c in raw.columns if str(c) == name][0]]
    try:
        r = np.asarray(column, dtype=float)
    except (TypeError, ValueError):
        return None
    t = background[:, names.index(name)]
    seen = np.isfinite(r)  # a missing raw value was imputed: no match to expect there
    if len(np.unique(r[seen])) < 2:
        return None
    a, b = np.polyfit(r[seen], t[seen], 1)
    if np.isclose(a, 1.0) and np.isclose(b, 0.0):  # passed through as it is
        return None
    if a == 0 or not np.allclose(a * r[seen] + b, t[seen], rtol=1e-7, atol=1e-9 * np.abs(t).max()):
        return None
    return replace(curve, grid=((curve.grid[0] - b) / a,))


def _explain(model, background, rows, names, raw, ctx: AuditContext) -> dict:
    from trustlab.explain.fastpd import FastPD

    explainer = FastPD(model, feature_names=names).fit(background)
    explanation = explainer.explain(rows, max_order=2)
    importance = explanation.importance
    curves, original = [], []
    for curve in explanation.partial_dependence:
        converted = _original_units(curve, background, names, raw)
        curves.append(curve if converted is None else converted)
        original += [] if converted is None else [curve.features[0]]
    pairs = importance.top_interactions(TOP_PAIRS)
    data = {
        "output_kind": importance.output_kind,
        "output_names": list(importance.output_names),
        "n_background": explanation.n_background,
        "n_rows": importance.n_rows,
        "expected_value": explanation.expected_value.tolist(),
        "mean_abs_shap": importance.to_dict()["mean_abs_shap"],
        "top_features": [c.features[0] for c in explanation.partial_dependence],
        "top_interactions": [{"features": list(p), "mean_abs_m": v} for p, v in pairs],
        "partial_dependence": [c.to_dict() for c in curves],
        "pd_original_units": original,
    }
    return {
        "data": data,
        "phi": explanation.predicted_class_shap(),
        "rows": rows,
        "names": names,
        "curves": tuple(curves),
        "pairs": pairs,
        # a --model audit has no training rows: its background comes from the audited rows
        "background_source": "training rows" if len(ctx.X_train) else "audited rows",
        "rows_source": "test rows" if len(ctx.X_train) else "audited rows",
    }


def _count(n: int) -> str:
    """``n`` encoded features, one in the singular (a one-feature model said '1 encoded features')."""
    return f"{n} encoded feature{'' if n == 1 else 's'}"


def _blocks(name: str, result: dict) -> list:
    from matplotlib.figure import Figure as MplFigure

    from trustlab.explain.fastpd import plot_shap_summary

    data = result["data"]
    kind = data["output_kind"]
    intro = Paragraph(
        f"Model {name}: FastPD explains its {kind} on {_count(len(result['names']))}, "
        f"for {data['n_rows']} {result['rows_source']}, with {data['n_background']} "
        f"{result['background_source']} as background."
    )
    shap_ax = plot_shap_summary(result["phi"], result["rows"], result["names"], max_display=10)
    shap_ax.set_title(f"{name}: SHAP values for the predicted class")
    shap_figure = Figure(
        shap_ax.figure,
        caption=f"SHAP values of {name} ({kind}) for each row's predicted class; colour: the "
        "feature's value",
        alt=f"Beeswarm plot of the SHAP values of {name}, one row of dots per feature",
    )
    pd_fig = MplFigure(figsize=(3.8 * len(result["curves"]), 3.2))
    pd_fig.subplots_adjust(wspace=0.35, bottom=0.16)  # cheaper to draw than a constrained layout
    for ax, curve in zip(
        pd_fig.subplots(1, len(result["curves"]), squeeze=False)[0], result["curves"], strict=True
    ):
        curve.plot(ax=ax)
        ax.set_title(curve.features[0])
    pd_figure = Figure(
        pd_fig,
        caption=f"Partial dependence of the {kind} of {name} on its most important features, "
        + _lines(data["output_names"])
        + _units(data["pd_original_units"]),
        alt=f"Line plots of the partial dependence of {name} on {', '.join(data['top_features'])}",
    )
    if not result["pairs"]:  # an empty table would read as lost output
        none = Paragraph(
            f"{name} has no pairwise interaction: every interaction component m_jk is zero "
            "or rounding error of its output."
            if len(result["names"]) > 1
            else f"{name} has one feature ({result['names'][0]}): there is no pair of features "
            "to interact."
        )
        return [intro, shap_figure, pd_figure, none]
    table = Table(
        ["feature", "feature", "mean |m_jk|"],
        [[a, b, float(v)] for (a, b), v in result["pairs"]],
        caption=f"Strongest pairwise interactions of {name}: mean absolute interaction component "
        "over the explained rows"
        + (" (summed over classes)" if len(data["output_names"]) > 1 else f" ({kind})"),
    )
    return [intro, shap_figure, pd_figure, table]


def _lines(outputs: list[str]) -> str:
    """What the lines of a PD plot are: one per class, or the one output (a binary boosting
    model's log-odds are those of its positive class)."""
    return "one line per class" if len(outputs) > 1 else f"one line: class {outputs[0]}"


def _units(original: list[str]) -> str:
    """Which PD axes are in the data's units: the model reads standardised (shifted and scaled)
    numbers, shown back on the scale of the audited table."""
    if not original:
        return ""
    them = "them" if len(original) > 1 else "it"
    return (
        f"; {', '.join(original)} on the scale of the audited table (the model reads {them} scaled)"
    )


def _headline(name: str, data: dict) -> str:
    if "not_explained" in data:
        return f"{name}: not explained ({data['not_explained'].split(';')[0]})"
    text = f"{name}: most important {', '.join(data['top_features'][:2])}"
    if data["top_interactions"]:
        a, b = data["top_interactions"][0]["features"]
        text += f", strongest interaction {a} \u00d7 {b}"
    return text

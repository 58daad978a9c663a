"""Report section "Glass-box model (ANOVA-TPNN)": an interpretable model beside the zoo.

An ANOVA-TPNN (:class:`trustlab.explain.anova_tpnn.ANOVATPNN`) is fitted on the training rows
of the audit, with its own preprocessing: the model quantile-transforms numeric features and has
a neuron for categorical ones, so it takes the raw features; missing values are imputed first
(median of a numeric feature, most frequent level of a categorical one, learnt on the training
rows; a column with at most one value on the training rows is left out, with a note, and with
no column left the section says it was not fitted). A column
named like the pair of two others ("a & b" beside a and b) is renamed for the model, with a
note. With more than 16 features only the 10 strongest pairs are fitted
(``interactions="auto"``), with a note: all pairs of 300 features would be 44,850 components.
Its test accuracy is set beside the zoo's, and its strongest components are drawn: each is
unique (it sums to zero over the training data in each of its variables), so the curves of the
components that carry signal agree across seeds (weak ones, and small tables, still vary).

The section needs torch (the ``torch`` extra): without it, fitting raises a ConfigError, which
the audit shows as the section's error. It does not apply (None) when the audit has no training
rows (a given model or predictions).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from trustlab.audit.context import AuditContext
from trustlab.report import Figure, Paragraph, Section, Table

__all__ = ["build", "TITLE", "MODEL_NAME", "TOP_COMPONENTS"]

TITLE = "Glass-box model (ANOVA-TPNN)"
MODEL_NAME = "anova_tpnn"
TOP_COMPONENTS = 4
TOP_TABLE = 10
N_JOBS = 1  # the audit runs on shared machines; the network is small
# Beyond this many features every pair (n (n - 1) / 2 of them) is too many components to fit in
# an audit: the strongest MAX_INTERACTIONS pairs are screened instead.
MAX_ALL_PAIRS_FEATURES = 16
MAX_INTERACTIONS = 10
JOINER = " & "  # how the model joins the features of a pair's component name

EXPLANATION = (
    "ANOVA-TPNN (Park et al., ICML 2025) is a neural network whose prediction is an intercept "
    "plus a sum of main effects g_j(x_j) and pairwise interactions g_jk(x_j, x_k), each built "
    "from products of sigmoid neurons that sum to zero over the training data. That condition "
    "makes the decomposition unique: unlike neural additive models, an interaction cannot soak "
    "up part of a main effect, so refits with other seeds agree on the components that carry "
    "signal (measured on synthetic tables of 1,000 rows and more; agreement across resamples of "
    "the data is not measured). On a small table, or for a weak component, a refit with another "
    "seed can draw another curve. "
    "For a multiclass label the components are class logits (centred across classes)."
)


def build(ctx: AuditContext) -> Section | None:
    """Fit ANOVA-TPNN on the training rows; None when the audit has none."""
    if ctx.n_train == 0 or len(ctx.X_train) == 0:
        return None
    from trustlab.explain.anova_tpnn import ANOVATPNN

    X_train, X_test, notes = _imputed(ctx.X_train, ctx.X_test)
    X_train, X_test, renamed = _without_joiner(X_train, X_test)
    notes += renamed
    if X_train.shape[1] == 0:  # every column was left out: "found array with 0 feature(s)"
        why = "no feature has two values on the training rows"
        reason = f"Not fitted: {why}."
        blocks = [Paragraph(note, "note") for note in [reason, *notes]]
        data = {"skipped": reason, "notes": notes}
        return Section("anova_tpnn", TITLE, blocks, data, summary=f"not fitted: {why}.")
    interactions = "all"
    n_features = X_train.shape[1]
    if n_features > MAX_ALL_PAIRS_FEATURES:
        # every pair of 300 features is 44,850 components: the fit ran for many minutes
        interactions = "auto"
        notes.append(
            f"With {n_features} features, pairs are screened: the model keeps the "
            f"{MAX_INTERACTIONS} strongest (interactions='auto'), not all "
            f"{n_features * (n_features - 1) // 2:,}."
        )
    model = ANOVATPNN(
        interactions=interactions,
        max_interactions=MAX_INTERACTIONS,
        random_state=ctx.random_state,
        n_jobs=N_JOBS,
    )
    model.fit(X_train, ctx.y_train)
    with warnings.catch_warnings(record=True) as caught:  # levels unseen in training: a note
        warnings.simplefilter("always", UserWarning)
        predicted = model.predict(X_test)
    for warning in caught:
        if "not seen in training" in str(warning.message):
            notes.append(f"On the test rows, {str(warning.message).removeprefix('X: ')}.")
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    scores = {name: _scores(ctx.y_test, pred) for name, pred in ctx.predictions.items()}
    scores[MODEL_NAME] = _scores(ctx.y_test, predicted)
    importance = model.importance()
    top = [name for name in importance.top(len(model.component_names_))][:TOP_COMPONENTS]
    blocks = [Paragraph(EXPLANATION)]
    blocks += [Paragraph(note, "note") for note in notes]
    blocks += [
        _scores_table(scores),
        _importance_table(importance),
        _importance_figure(importance),
    ]
    blocks += [_component_figure(model, name) for name in top]
    data = {
        "models": scores,
        "importance": importance.to_dict(),
        "components": list(model.component_names_),
        "training": {
            "n_epochs": int(model.history_["n_epochs"]),
            "best_epoch": int(model.history_["best_epoch"]),
            "best_validation_loss": float(model.history_["best_validation_loss"]),
        },
        "notes": notes,
    }
    return Section("anova_tpnn", TITLE, blocks, data, summary=_summary(scores, top))


def _imputed(X_train: pd.DataFrame, X_test: pd.DataFrame) -> tuple:
    """Fill gaps with the training median (numeric) or most frequent level (categorical); leave
    out the columns with at most one value on the training rows (the model needs features that
    vary there, and a column with no value there has nothing to fill its gaps with)."""
    from trustlab.audit.models import categorical_columns

    categorical = set(categorical_columns(X_train))
    fill, constant = {}, []
    for column in X_train.columns:
        observed = X_train[column].dropna()
        if observed.nunique() < 2:
            constant.append(column)
            continue
        if not (X_train[column].isna().any() or X_test[column].isna().any()):
            continue
        fill[column] = observed.mode().iloc[0] if column in categorical else observed.median()
    notes = []
    if constant:
        notes.append(
            f"{', '.join(map(str, constant))}: at most one value on the training rows, left out "
            "of this model (a component needs a feature that varies)."
        )
        X_train, X_test = X_train.drop(columns=constant), X_test.drop(columns=constant)
    if fill:
        gaps = int(X_train[list(fill)].isna().sum().sum() + X_test[list(fill)].isna().sum().sum())
        notes.append(
            f"{gaps} missing value(s) in {', '.join(fill)} were filled with the training median "
            "(numeric) or most frequent value (categorical) for this model."
        )
    return X_train.fillna(fill), X_test.fillna(fill), notes


def _without_joiner(X_train: pd.DataFrame, X_test: pd.DataFrame) -> tuple:
    """Rename the columns named like a pair's component: " & " joins the features of a pair's
    name, so with columns a, b and "a & b" the model would have two components called "a & b"
    (it refuses such names). A name such as "R & D" beside no columns R and D is kept."""
    names = [str(column) for column in X_train.columns]
    taken, mapping = set(names), {}
    for column, name in zip(X_train.columns, names, strict=True):
        if not _names_a_pair(name, taken):
            continue
        new = base = name.replace(JOINER, "&")
        count = 1
        while new in taken:
            count += 1
            new = f"{base} ({count})"
        taken.add(new)
        mapping[column] = new
    if not mapping:
        return X_train, X_test, []
    listed = ", ".join(f"{str(old)!r} as {new!r}" for old, new in mapping.items())
    note = f"In this model {listed} (' & ' joins the features of a pair's name)."
    return X_train.rename(columns=mapping), X_test.rename(columns=mapping), [note]


def _names_a_pair(name: str, names: set) -> bool:
    """Whether ``name`` is "a & b" for two other column names a and b."""
    start = name.find(JOINER)
    while start >= 0:
        if name[:start] in names and name[start + len(JOINER) :] in names:
            return True
        start = name.find(JOINER, start + 1)
    return False


def _scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    y_true, y_pred = np.asarray(y_true).astype(str), np.asarray(y_pred).astype(str)
    return {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "balanced_accuracy": float(balanced_accuracy_score(y_true, y_pred)),
    }


def _scores_table(scores: dict) -> Table:
    rows = [[name, s["accuracy"], s["balanced_accuracy"]] for name, s in scores.items()]
    return Table(
        ["model", "accuracy", "balanced accuracy"],
        rows,
        caption=f"Test accuracy of the glass-box model ({MODEL_NAME}) beside the audited models",
    )


def _importance_table(importance) -> Table:
    rows = [[name, value] for name, value in importance.ranked()[:TOP_TABLE]]
    return Table(
        ["component", "root mean square"],
        rows,
        caption="The strongest components: how much each moves the logit over the training rows",
    )


def _importance_figure(importance) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.5, 4.0))
    importance.plot(ax=fig.add_subplot(), top=TOP_TABLE)
    return Figure(
        fig,
        "ANOVA-TPNN component importance (root mean square of each component)",
        alt="Horizontal bars of the importance of the strongest ANOVA-TPNN components",
    )


def _component_figure(model, name: str) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.5, 4.2))
    model.plot_component(name, ax=fig.add_subplot())
    term = model.terms_[model.component_names_.index(name)]  # a column may be called "R & D"
    kind = "interaction" if len(term) > 1 else "main effect"
    return Figure(
        fig,
        f"ANOVA-TPNN {kind} {name}",
        alt=f"Plot of the ANOVA-TPNN {kind} {name} over the range of its feature values",
    )


def _summary(scores: dict, top: list[str]) -> str:
    ours = scores[MODEL_NAME]
    text = f"The glass-box ANOVA-TPNN reaches test accuracy {ours['accuracy']:.3f}"
    others = {k: v for k, v in scores.items() if k != MODEL_NAME}
    if others:
        best = max(others, key=lambda k: others[k]["accuracy"])
        text += f" (best audited model: {best}, {others[best]['accuracy']:.3f})"
    return text + f"; strongest components: {', '.join(top)}."

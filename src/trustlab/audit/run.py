"""``run_audit``: load data, train or load models, build every report section, write the report."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trustlab._checks import check_probability, check_random_state
from trustlab._results import Result, output_dir
from trustlab.audit import sections as section_registry
from trustlab.audit.context import AuditContext
from trustlab.audit.models import (
    ZOO_NAMES,
    aligned_probabilities,
    default_zoo,
    load_classifier,
    make_pipeline,
    predict_labels,
)
from trustlab.errors import InputError
from trustlab.report import Report, Section

__all__ = ["run_audit", "AuditResult", "DEFAULT_DATASET"]

DEFAULT_DATASET = "chile"
ProgressCallback = Callable[[str, int, int], None]
logger = logging.getLogger("trustlab.audit")


@dataclass(frozen=True)
class AuditResult(Result):
    """What :func:`run_audit` made: the report, where it was written, and the audit context."""

    report: Report
    html_path: Path
    json_path: Path
    context: AuditContext = field(repr=False)

    def headline(self) -> dict[str, dict[str, Any]]:
        """Per model: accuracy, balanced accuracy and the DCP bounds, where the sections have them."""
        data = {s.id: s.data for s in self.report.sections}
        overview = data.get("overview", {}).get("models", {})
        fairness = data.get("fairness", {}).get("models", {})
        headline = {}
        for name in self.context.predictions:
            scores = overview.get(name, {})
            dcp = fairness.get(name, {})
            headline[name] = {
                "accuracy": scores.get("accuracy"),
                "balanced_accuracy": scores.get("balanced_accuracy"),
                "dcp_lower": dcp.get("lower"),
                "dcp_upper": dcp.get("upper"),
                "dcp_aggregate": dcp.get("aggregate_estimate"),
            }
        return headline

    def _dict_items(self) -> dict:
        """The file paths, the sections' status and the headline numbers."""
        return {
            "html_path": str(self.html_path),
            "json_path": str(self.json_path),
            "dataset": self.context.dataset,
            "label": self.context.label,
            "group": self.context.group,
            "mode": self.context.mode,
            "sections": [
                {"id": s.id, "status": s.status, "error": s.error} for s in self.report.sections
            ],
            "headline": self.headline(),
        }

    def summary(self) -> str:
        ctx = self.context
        failed = [s.id for s in self.report.sections if s.status == "failed"]
        lines = [
            f"Audit of {ctx.dataset} (label {ctx.label!r}, group {ctx.group!r}): "
            f"{len(ctx.predictions)} model(s), {len(self.report.sections)} section(s)"
            + (f", failed: {', '.join(failed)}" if failed else ""),
            f"  report: {self.html_path}",
            f"  data:   {self.json_path}",
        ]
        for name, numbers in self.headline().items():
            parts = []
            if numbers["accuracy"] is not None:
                parts.append(f"accuracy {numbers['accuracy']:.3f}")
            if numbers["dcp_lower"] is not None and numbers["dcp_upper"] is not None:
                parts.append(f"DCP in [{numbers['dcp_lower']:.4f}, {numbers['dcp_upper']:.4f}]")
            lines.append(f"  {name}: " + (", ".join(parts) or "no numbers"))
        return "\n".join(lines)


def run_audit(
    data: str | os.PathLike | pd.DataFrame | None = None,
    *,
    label: str | None = None,
    group: str | None = None,
    pred: str | None = None,
    model: str | os.PathLike | Any | None = None,
    trust_pickle: bool = False,
    trust_types: Iterable[str] = (),
    out: str | os.PathLike = "out",
    test_size: float = 0.5,
    random_state: int | np.random.Generator | None = 0,
    sections: Sequence[str] | None = None,
    group_as_feature: bool | None = None,
    progress: ProgressCallback | None = None,
) -> AuditResult:
    """Audit a dataset and its models; write ``report.html`` and ``report.json`` into ``out``.

    Three modes, chosen by the arguments:

    * neither ``pred`` nor ``model``: the default zoo (logistic regression, a random forest,
      gradient boosting) is trained on a stratified train split and audited on the test split;
    * ``model``: the user's fitted model predicts on the whole table, which is the test set;
    * ``pred``: the predictions in that column are audited as given (whole table, no model).

    Parameters
    ----------
    data : None, str, path-like or pandas.DataFrame
        None for the default bundled dataset (``"chile"``), a bundled dataset name, a CSV /
        Parquet file, or a DataFrame.
    label, group : str, optional
        The label and protected-group columns. Required for a user table; a bundled dataset
        defaults to its label and first protected attribute.
    pred : str, optional
        A column of predicted labels to audit.
    model : path-like or fitted estimator, optional
        A ``.skops`` file (or a pickle/joblib file with ``trust_pickle=True``), or a fitted
        estimator. It receives the columns it was fitted on (``feature_names_in_``) when it
        records them, else every feature column.
    trust_pickle : bool, default False
        Allow loading pickle/joblib model files, which can run arbitrary code.
    trust_types : iterable of str
        Extra type names to trust in a skops file (see :func:`trustlab.audit.models.load_classifier`).
    out : path-like, default "out"
        Output directory (created if needed).
    test_size : float in (0, 1), default 0.5
        Share of the rows held out for the audit when the zoo is trained.
    random_state : int, numpy Generator or None, default 0
        Seed of the split, the models and every stochastic section. None draws a fresh seed;
        the seed used is recorded in the report either way.
    sections : sequence of str, optional
        Names from :data:`trustlab.audit.sections.SECTION_MODULES`, in report order; all by
        default.
    group_as_feature : bool or None, default None
        Whether models may use the group column as a feature. None: a bundled dataset uses its
        declared features (so ``"sex"`` is a feature of chile, ``"region"`` is not); a user table
        leaves the group column out. True or False forces it either way.
    progress : callable, optional
        Called as ``progress(description, done, total)`` as steps start and end.

    Returns
    -------
    AuditResult

    Raises
    ------
    InputError
        Unknown dataset or file, missing or clashing columns, fewer than two classes or groups,
        an untrusted or unreadable model file.

    Notes
    -----
    Rows with a missing label, group or prediction are dropped (the report says how many);
    missing feature values are imputed (median / most frequent). report.json is rewritten after
    each section, so a crash loses nothing already computed; a section that raises is shown as
    failed, with its error, and the other sections still run.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "y":    ["a", "b", "c", "a", "b", "c", "a", "b"] * 10,
    ...     "yhat": ["a", "b", "c", "b", "b", "c", "a", "a"] * 10,
    ...     "g":    ["u", "u", "u", "u", "v", "v", "v", "v"] * 10,
    ... })
    >>> result = run_audit(table, label="y", group="g", pred="yhat", out=tempfile.mkdtemp(),
    ...                    sections=["overview"])
    >>> result.html_path.name, result.headline()["yhat"]["accuracy"]
    ('report.html', 0.75)
    """
    seed = _seed(random_state)
    test_size = check_probability(test_size, "test_size")
    names = _section_names(sections)
    mode = "predictions" if pred is not None else ("model" if model is not None else "zoo")
    if pred is not None and model is not None:
        raise InputError.bad("pred", "None when a model is given (audit one or the other)", pred)
    n_model_steps = {"zoo": len(ZOO_NAMES), "model": 1, "predictions": 0}[mode]
    steps = _Steps(progress, total=1 + n_model_steps + len(names) + 1)
    out = _output_directory(out)  # fail before any training, not after

    steps.start("loading data")
    table = _load_table(data, label, group, pred, group_as_feature)
    steps.finish()
    if mode == "predictions":
        ctx = _context_from_predictions(table, seed)
    elif mode == "model":
        trusted = [trust_types] if isinstance(trust_types, str) else list(trust_types)
        ctx = _context_from_model(table, model, trust_pickle, trusted, seed, steps)
    else:
        ctx = _context_from_zoo(table, test_size, seed, steps)

    report = Report(f"trustlab audit: {ctx.dataset}", _meta(ctx, test_size))
    report.complete = False
    for name in names:
        steps.start(f"section: {name}")
        _add_section(report, name, ctx)
        report.write_json(out)  # keep what is done if a later section crashes the process
        steps.finish()
    steps.start("writing the report")
    report.complete = True
    html_path, json_path = report.write(out)
    steps.finish()
    return AuditResult(report=report, html_path=html_path, json_path=json_path, context=ctx)


# --- steps and sections ---------------------------------------------------------------------


class _Steps:
    """Counts finished steps and tells the optional progress callback."""

    def __init__(self, callback: ProgressCallback | None, total: int):
        self.callback, self.total, self.done = callback, total, 0

    def start(self, description: str) -> None:
        if self.callback is not None:
            self.callback(description, self.done, self.total)

    def finish(self) -> None:
        self.done += 1
        if self.callback is not None and self.done == self.total:
            self.callback("done", self.done, self.total)


def _output_directory(out) -> Path:
    if not isinstance(out, (str, os.PathLike)):
        raise InputError.bad("out", "a directory path", out)
    return output_dir(out, "out")


def _seed(random_state) -> int:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)  # rejects negative seeds with the usual message
        return int(random_state)
    # None or a Generator: draw one int seed, so the report can name the seed it used.
    return int(check_random_state(random_state).integers(0, 2**31 - 1))


def _section_names(sections: Sequence[str] | None) -> list[str]:
    registered = section_registry.SECTION_MODULES  # read at call time: the lead may extend it
    if sections is None:
        return list(registered)
    if isinstance(sections, str):
        sections = [sections]
    names = list(sections)
    for name in names:
        if name not in registered:
            raise InputError.bad("sections", "names among " + ", ".join(registered), name)
    return names


def _add_section(report: Report, name: str, ctx: AuditContext) -> None:
    title = name.replace("_", " ").capitalize()
    try:
        module = section_registry.load_section(name)
        title = getattr(module, "TITLE", title)
        section = module.build(ctx)
        if section is not None:
            report.add(section)
    except Exception as exc:  # one broken section must not lose the whole report
        logger.warning("report section %r failed: %s: %s", name, type(exc).__name__, exc)
        report.add(Section.failed(_free_id(report, name), title, exc))


def _free_id(report: Report, name: str) -> str:
    used = {s.id for s in report.sections}
    candidate, i = name, 2
    while candidate in used:
        candidate, i = f"{name}-{i}", i + 1
    return candidate


def _meta(ctx: AuditContext, test_size: float) -> dict:
    how = {
        "zoo": f"default models trained on {1 - test_size:.0%} of the rows, audited on the rest",
        "model": "the given model, audited on every row",
        "predictions": "the given predictions, audited on every row",
    }[ctx.mode]
    return {
        "dataset": ctx.dataset,
        "label": ctx.label,
        "group": ctx.group,
        "models": list(ctx.predictions),
        "audit": how,
        "rows": {"train": ctx.n_train, "test": ctx.n_test},
        "random_state": ctx.random_state,
    }


# --- data -----------------------------------------------------------------------------------


@dataclass
class _Table:
    frame: pd.DataFrame
    name: str
    label: str
    group: str
    features: list[str]
    pred: str | None
    notes: list[str]


def _load_table(data, label, group, pred, group_as_feature) -> _Table:
    frame, name, dataset = _read_data(data)
    if dataset is not None:
        label = dataset.label if label is None else label
        group = dataset.protected[0] if group is None else group
    for option, value in (("label", label), ("group", group)):
        if value is None:
            raise InputError.bad(option, f"the name of the {option} column of the table", None)
    _check_columns(frame, label=label, group=group, pred=pred)
    if group == label:
        raise InputError.bad("group", "a column other than the label column", group)
    if pred is not None and pred in (label, group):
        raise InputError.bad("pred", "a column other than the label and group columns", pred)
    features = _feature_columns(frame, dataset, label, group, pred, group_as_feature)
    frame, notes = _drop_missing(frame, [c for c in (label, group, pred) if c is not None])
    return _Table(frame, name, label, group, features, pred, notes)


def _read_data(data):
    """(frame, display name, bundled Dataset or None)."""
    from trustlab.data import list_datasets, load_dataset

    if data is None:
        data = DEFAULT_DATASET
    if isinstance(data, pd.DataFrame):
        return data.copy(), "data frame", None
    if not isinstance(data, (str, os.PathLike)):
        raise InputError.bad("data", "None, a dataset name, a file path or a DataFrame", data)
    path = Path(data)
    if path.is_file():
        from trustlab.data.tables import read_table

        return read_table(path, name="data"), path.name, None
    names = [info["name"] for info in list_datasets()]
    if isinstance(data, str) and data.lower() in names:
        dataset = load_dataset(data)
        return dataset.frame, dataset.name, dataset
    raise InputError.bad(
        "data",
        f"a bundled dataset name ({', '.join(names)}) or an existing CSV or Parquet file",
        str(data),
    )


def _check_columns(frame: pd.DataFrame, **columns: str | None) -> None:
    from trustlab.data.tables import require_columns

    require_columns(frame, columns)


def _feature_columns(frame, dataset, label, group, pred, group_as_feature) -> list[str]:
    excluded = {label, pred}
    if dataset is not None:
        features = [c for c in dataset.features if c not in excluded]
    else:
        features = [c for c in frame.columns if c not in excluded and c != group]
    if group_as_feature is True and group not in features:
        features.append(group)
    elif group_as_feature is False and group in features:
        features.remove(group)
    return features


def _drop_missing(frame: pd.DataFrame, columns: list[str]) -> tuple[pd.DataFrame, list[str]]:
    missing = frame[columns].isna().any(axis=1)
    notes = []
    if missing.any():
        per_column = ", ".join(
            f"{c}: {int(frame[c].isna().sum())}" for c in columns if frame[c].isna().any()
        )
        notes.append(
            f"Dropped {int(missing.sum())} of {len(frame)} rows with a missing value in a "
            f"required column ({per_column})."
        )
        frame = frame.loc[~missing]
    if len(frame) == 0:
        raise InputError.bad("data", "rows with a label and a group value", "none")
    return frame.reset_index(drop=True), notes


def _class_labels(*arrays: np.ndarray) -> np.ndarray:
    try:
        return np.unique(np.concatenate([np.asarray(a) for a in arrays if len(a)]))
    except TypeError as exc:  # e.g. numbers in the label column and strings in the predictions
        kinds = sorted({type(v).__name__ for a in arrays for v in np.asarray(a, dtype=object)})
        raise InputError.bad(
            "pred", "predictions of the same kind as the labels", f"a mix of {', '.join(kinds)}"
        ) from exc


def _check_classes_and_groups(labels: np.ndarray, groups: np.ndarray) -> None:
    if len(labels) < 2:
        raise InputError.bad("label", "at least 2 classes", f"only {labels.tolist()!r}")
    if len(np.unique(groups)) < 2:
        raise InputError.bad(
            "group", "at least 2 groups in the audited rows", f"only {np.unique(groups).tolist()!r}"
        )


def _imputation_note(X: pd.DataFrame) -> list[str]:
    gaps = {c: int(n) for c, n in X.isna().sum().items() if n}
    if not gaps:
        return []
    listed = ", ".join(f"{c}: {n}" for c, n in gaps.items())
    return [f"Missing feature values were imputed (median or most frequent value): {listed}."]


# --- the three modes ------------------------------------------------------------------------


def _context_from_predictions(table: _Table, seed: int) -> AuditContext:
    frame = table.frame
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    pred = frame[table.pred].to_numpy()
    labels = _class_labels(y, pred)
    _check_classes_and_groups(labels, g)
    X = frame[table.features]
    return AuditContext(
        dataset=table.name,
        label=table.label,
        group=table.group,
        labels=labels,
        feature_names=list(table.features),
        X_train=X.iloc[:0],
        X_test=X,
        y_train=y[:0],
        y_test=y,
        g_train=g[:0],
        g_test=g,
        predictions={table.pred: pred},
        random_state=seed,
        mode="predictions",
        notes=table.notes,
    )


def _context_from_model(table, model, trust_pickle, trust_types, seed, steps) -> AuditContext:
    frame = table.frame
    if isinstance(model, (str, os.PathLike)):
        steps.start(f"loading model {Path(model).name}")
        name = Path(model).stem or "model"
        estimator = load_classifier(model, trust_pickle=trust_pickle, trust_types=trust_types)
    else:
        steps.start("predicting with the given model")
        name, estimator = type(model).__name__, model
    columns = _model_columns(estimator, frame, table.features)
    X = frame[columns]
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    pred = predict_labels(estimator, X, "model")
    labels = _class_labels(y, pred)
    _check_classes_and_groups(labels, g)
    probabilities = aligned_probabilities(estimator, X, labels)
    steps.finish()
    return AuditContext(
        dataset=table.name,
        label=table.label,
        group=table.group,
        labels=labels,
        feature_names=columns,
        X_train=X.iloc[:0],
        X_test=X,
        y_train=y[:0],
        y_test=y,
        g_train=g[:0],
        g_test=g,
        models={name: estimator},
        predictions={name: pred},
        probabilities={} if probabilities is None else {name: probabilities},
        random_state=seed,
        mode="model",
        notes=table.notes,
    )


def _model_columns(estimator, frame: pd.DataFrame, features: list[str]) -> list[str]:
    wanted = getattr(estimator, "feature_names_in_", None)
    if wanted is None:
        return list(features)
    wanted = [str(c) for c in wanted]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError.bad(
            "model",
            f"data with the columns it was fitted on ({', '.join(wanted)})",
            f"a table without {', '.join(missing)}",
        )
    return wanted


def _context_from_zoo(table: _Table, test_size: float, seed: int, steps: _Steps) -> AuditContext:
    frame = table.frame
    if not table.features:
        raise InputError.bad(
            "data", "at least one feature column besides the label, group and pred", "none"
        )
    X = frame[table.features]
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    _check_classes_and_groups(_class_labels(y), g)
    train, test, notes = _split(y, test_size, seed)
    X_train, X_test = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
    y_train, y_test = y[train], y[test]
    if len(np.unique(y_train)) < 2:
        raise InputError.bad(
            "test_size", "a split leaving 2 or more classes to train on", test_size
        )
    models, predictions = {}, {}
    for name, estimator in default_zoo(seed).items():
        steps.start(f"training {name}")
        pipeline = make_pipeline(estimator, X_train).fit(X_train, y_train)
        models[name] = pipeline
        predictions[name] = predict_labels(pipeline, X_test, name)
        steps.finish()
    labels = _class_labels(y, *predictions.values())
    probabilities = {name: aligned_probabilities(m, X_test, labels) for name, m in models.items()}
    return AuditContext(
        dataset=table.name,
        label=table.label,
        group=table.group,
        labels=labels,
        feature_names=list(table.features),
        X_train=X_train,
        X_test=X_test,
        y_train=y_train,
        y_test=y_test,
        g_train=g[train],
        g_test=g[test],
        models=models,
        predictions=predictions,
        probabilities={k: v for k, v in probabilities.items() if v is not None},
        random_state=seed,
        mode="zoo",
        notes=table.notes + notes + _imputation_note(X),
    )


def _split(y: np.ndarray, test_size: float, seed: int):
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    _, counts = np.unique(y, return_counts=True)
    if counts.min() >= 2:
        try:
            train, test = train_test_split(rows, test_size=test_size, stratify=y, random_state=seed)
            return np.sort(train), np.sort(test), []
        except ValueError:
            pass  # too few rows for a stratified split of this size: fall back below
    try:
        train, test = train_test_split(rows, test_size=test_size, random_state=seed)
    except ValueError as exc:
        raise InputError.bad(
            "test_size", f"a split of {len(y)} rows into two parts", test_size
        ) from exc
    note = "The train/test split is not stratified: some class has too few rows for that."
    return np.sort(train), np.sort(test), [note]

"""``run_audit``: load data, train or load models, build every report section, write the report.

Besides report.html and report.json an audit saves what it made (:mod:`trustlab.audit.outputs`):
each model it trained as ``models/<name>.skops`` and the predictions, with row ids, as
``predictions.csv``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trustlab._checks import check_bool, check_random_state
from trustlab._progress import check_progress
from trustlab.audit import outputs
from trustlab.audit import sections as section_registry
from trustlab.audit.context import AuditContext, AuditPlan, audit_mode, check_test_groups
from trustlab.audit.models import (
    ZOO_NAMES,
    ZOO_TREE_ENSEMBLES,
    aligned_probabilities,
    default_zoo,
    load_classifier,
    make_pipeline,
    model_columns,
    predict_labels,
)
from trustlab.audit.result import AuditResult
from trustlab.audit.table import (
    DEFAULT_DATASET,
    AuditTable,
    check_class_values,
    check_classes_and_groups,
    check_predicted_labels,
    class_labels,
    imputation_note,
    load_table,
    split_rows,
    usable_features,
)
from trustlab.errors import InputError
from trustlab.report import Report, Section

__all__ = ["run_audit", "AuditResult", "AuditPlan", "DEFAULT_DATASET"]

ProgressCallback = Callable[[str, int, int], None]
PlanCallback = Callable[[AuditPlan], None]
logger = logging.getLogger("trustlab.audit")


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
    overwrite: bool = False,
    encoding: str | None = None,
    test_size: float | None = None,
    random_state: int | np.random.Generator | None = 0,
    sections: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    group_as_feature: bool | None = None,
    exclude: Sequence[str] = (),
    progress: ProgressCallback | None = None,
    plan: PlanCallback | None = None,
    participation: Sequence[str | os.PathLike] | None = None,
) -> AuditResult:
    """Audit a dataset and its models; write the report, the predictions and the trained models
    into ``out``.

    Three modes, chosen by the arguments:

    * neither ``pred`` nor ``model``: the default zoo (logistic regression, a random forest,
      gradient boosting) is trained on a stratified train split and audited on the test split;
    * ``model``: the user's fitted model predicts on the whole table, which is the test set;
    * ``pred``: the predictions in that column are audited as given (whole table, no model).

    Files written into ``out``: ``report.html``, ``report.json``, ``predictions.csv`` (each
    audited row's ``row`` id in the input table, its label and group, every model's prediction
    and class probabilities ``<model>:proba:<class>`` where available) and, for the zoo,
    ``models/<name>.skops`` (load with :func:`trustlab.audit.models.load_classifier`).

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
    overwrite : bool, default False
        Replace an earlier audit in ``out``. Without it a directory holding ``report.json``,
        ``report.html``, ``predictions.csv`` or ``models/*.skops`` is refused before any work,
        so a re-run never mixes its files with an older run's. Only the files the earlier audit
        wrote are deleted (its report, predictions.csv and the models its report.json lists),
        never the ``model`` or ``data`` file being audited nor any other file (one the default
        models would be saved over is refused, naming ``out``).
    encoding : str, optional
        Text encoding of a CSV/TSV ``data`` file (default UTF-8), e.g. ``"latin-1"``.
    test_size : float in (0, 1) or None, default None (0.5)
        Share of the rows held out for the audit when the zoo is trained (the split is
        stratified by label and group where every pair has 2 or more rows, else by label).
        Refused with ``pred`` or ``model``: they are audited on every row.
    random_state : int, numpy Generator or None, default 0
        Seed of the split, the models, the bootstrap intervals and every stochastic section.
        An int must lie in [0, 2**32-1] (scikit-learn's range). None draws a fresh seed; the
        seed used is recorded in the report either way.
    sections : sequence of str, optional
        Distinct names from :data:`trustlab.audit.sections.SECTION_MODULES`; all by default.
        Those that cannot apply (:data:`trustlab.audit.sections.SECTION_MODES`; participation
        without answers files) are left out, of the plan too; an InputError if that leaves none.
        The report's meta records the names given as ``sections_asked``, and the overview's
        notes (dropped rows, a section left out) as ``notes`` when no overview is built.
    models : sequence of str, optional
        The default models to train: distinct names from
        :data:`trustlab.audit.models.ZOO_NAMES`, in this order; all by default. Refused with
        ``pred`` or ``model`` (nothing is trained). With one model there is no ranking section,
        without a tree ensemble no FastPD section (the overview notes why; a ``sections`` list
        of only those is refused). The report's meta records them as ``models_asked``.
    group_as_feature : bool or None, default None
        Whether models may use the group column as a feature. None: a bundled dataset uses its
        declared features (so ``"sex"`` is a feature of chile, ``"region"`` is not); a user table
        leaves the group column out. True or False forces it either way; refused with ``pred``
        (no model is trained).
    exclude : sequence of str, default ()
        Columns the default models must not use as features (a row id, a leaked outcome);
        refused with ``pred`` or ``model``, which train nothing. A column holding a different
        whole number on every row gets a note naming it, as a row id would.
    progress : callable, optional
        Called as ``progress(description, done, total)`` as steps start and end.
    plan : callable, optional
        Called once with an :class:`AuditPlan` when the input is checked, before any model is
        trained and any section built: to say what the audit will do, or to stop it (by raising)
        when the work is too large.
    participation : sequence of path-like, optional
        Participation answers files (one per assessor, see :mod:`trustlab.governance`); they are
        checked before any work and scored into the "participation" section. Without them that
        section is left out.

    Returns
    -------
    AuditResult

    Raises
    ------
    InputError
        Unknown dataset or file, missing or clashing columns, fewer than two classes, fewer than
        two groups in the audited rows, a label that is not class labels (numbers with a
        fractional part), predictions that are not class labels (scores), a seed beyond
        2**32-1, an untrusted or unreadable model file, an unreadable participation file, a
        feature the default models train on holding infinity, numbers too large to scale
        (beyond about 1e154) or mixing numbers and text, an earlier audit in ``out`` without
        ``overwrite``.

    Notes
    -----
    Rows with a missing label, group or prediction are dropped (the report says how many);
    missing feature values are imputed (median / most frequent); feature columns that are empty
    or hold one value in the training rows are left out of the trained models (noted).
    report.json is rewritten after each section, so a crash loses nothing already computed; a
    section that raises is shown as failed, with its error, and the other sections still run.

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
    >>> result.predictions_path.name
    'predictions.csv'
    """
    check_progress(progress, "a callable (description, done, total) or None")
    seed = _seed(random_state)
    mode, test_size = audit_mode(pred, model, test_size, group_as_feature, exclude)
    zoo = _zoo_names(models, mode)  # the default models it trains: none with pred or model
    overwrite = check_bool(overwrite, "overwrite")
    names = _section_names(sections, mode, bool(participation))  # the plan names only these
    names, left_out = _zoo_sections(names, zoo)  # one model: no ranking; no tree: no fastpd
    n_model_steps = {"zoo": len(zoo), "model": 1, "predictions": 0}[mode]
    steps = _Steps(progress, total=1 + n_model_steps + 1 + len(names) + 1)
    assessment = _participation(participation)  # bad answers files fail before any training
    inputs = [p for p in (data, model) if isinstance(p, (str, os.PathLike))]
    saved = zoo  # the models it saves into out/models/
    out = outputs.prepare_output(out, overwrite, inputs, saved)  # fail before any training

    steps.start("loading data")
    table = load_table(
        data, label, group, pred, group_as_feature, encoding, exclude, trained=mode == "zoo"
    )
    steps.finish()

    def tell_plan(models: Sequence[str], n_train: int, n_test: int) -> None:
        if plan is not None:
            plan(AuditPlan(table.name, mode, list(models), n_train, n_test, list(names)))

    if mode == "predictions":
        ctx = _context_from_predictions(table, seed)
        tell_plan([table.pred], 0, ctx.n_test)
    elif mode == "model":
        trusted = [trust_types] if isinstance(trust_types, str) else list(trust_types)
        ctx = _context_from_model(table, model, trust_pickle, trusted, seed, steps)
        names = _without_fastpd(names, ctx, steps)  # a logistic regression: no tree to explain
        tell_plan(list(ctx.models), 0, ctx.n_test)
    else:
        ctx = _context_from_zoo(table, zoo, test_size, seed, steps, tell_plan)
        ctx.notes += [note for name in left_out if (note := _zoo_note(ctx, name))]

    ctx.participation = assessment  # read by the "participation" section
    steps.start("saving models and predictions" if ctx.mode == "zoo" else "saving predictions")
    outputs.clear_previous(out, keep=inputs)  # never the model or table being audited
    trained = ctx.models if ctx.mode == "zoo" else {}
    ctx.files = {
        "predictions": outputs.save_predictions(out, ctx),
        "models": outputs.save_models(out, trained),
    }
    steps.finish()

    meta = _meta(ctx, test_size, sections, models)
    if "overview" not in names:  # the overview shows these; without it the page header does
        warned = section_registry.load_section("overview").context_warnings(ctx)
        extra = {"notes": list(ctx.notes), "warnings": warned}  # dropped rows; a misnamed class
        meta.update({key: value for key, value in extra.items() if value})
    report = Report(f"trustlab audit: {ctx.dataset}", meta)
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
    return AuditResult(
        report=report,
        html_path=html_path,
        json_path=json_path,
        context=ctx,
        predictions_path=out / ctx.files["predictions"],
        model_paths={name: out / path for name, path in ctx.files["models"].items()},
    )


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


MAX_SEED = 2**32 - 1  #: scikit-learn's seeds are below 2**32; the audit passes its seed on to it


def _seed(random_state) -> int:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)  # rejects negative seeds with the usual message
        if random_state > MAX_SEED:  # scikit-learn's limit; checked before any work
            raise InputError.bad("random_state", "an integer in [0, 2**32-1]", int(random_state))
        return int(random_state)
    # None or a Generator: draw one int seed, so the report can name the seed it used.
    return int(check_random_state(random_state).integers(0, 2**31 - 1))


def _participation(files: Sequence[str | os.PathLike] | None) -> Any:
    """The scored participation assessment of the answers files, or None without any."""
    if files is None:
        return None
    wanted = "a path or a sequence of answers files' paths"
    if isinstance(files, (bytes, bytearray, memoryview)):  # list() gave its bytes: "got 97"
        raise InputError.bad("participation", wanted, files)
    try:
        paths = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    except TypeError:  # 5: a raw "'int' object is not iterable"
        raise InputError.bad("participation", wanted, files) from None
    if not paths:
        return None
    from trustlab.governance import assess

    try:
        return assess(paths)
    except InputError as exc:  # assess names its argument "answers[i]": here it is participation
        argument = exc.argument or ""
        message = str(exc)
        named = message.startswith(f"{argument}:") or message.startswith(f"{argument} (")
        if not (argument.startswith("answers") and named):  # "answers[0] (file.yaml): ..."
            raise
        raise InputError(
            "participation" + message[len(argument) :], argument="participation"
        ) from exc


def _section_names(sections: Sequence[str] | None, mode: str, participation: bool) -> list[str]:
    """The sections to build, in the given order, without those that cannot apply in ``mode``
    and, without answers files, participation; refused if that leaves none of those asked."""
    registered = section_registry.SECTION_MODULES  # read at call time: the lead may extend it
    sections = [sections] if isinstance(sections, str) else sections
    asked = list(registered) if sections is None else list(sections)
    for name in asked:
        if name not in registered or asked.count(name) > 1:  # a repeat failed as 'overview-2'
            raise InputError.bad(
                "sections", f"names among {', '.join(registered)}, each once", name
            )
    names = [name for name in asked if participation or name != "participation"]
    names = section_registry.sections_for_mode(names, mode)
    if asked and not names:  # only sections this mode cannot build ([] asks for none)
        can = section_registry.sections_for_mode(registered, mode)
        can = ", ".join(can).replace("participation", "participation with answers files")
        raise InputError(
            f"sections: expected a section a {mode} audit builds ({can}), got " + ", ".join(asked),
            argument="sections",
        )
    return names


_NO_TREE = "FastPD explains tree ensembles only"


def _zoo_names(models: Sequence[str] | None, mode: str) -> tuple[str, ...]:
    """The default models to train: ``models`` (distinct names of ZOO_NAMES, in that order) or
    all of them; none with a pred column or a model, with which ``models`` is refused."""
    if models is None:
        return ZOO_NAMES if mode == "zoo" else ()
    if mode != "zoo":
        given = "a pred column" if mode == "predictions" else "a model"
        raise InputError.bad("models", f"no default models with {given} (none is trained)", models)
    asked = [models] if isinstance(models, str) else models
    expected = f"names among {', '.join(ZOO_NAMES)}, each once"
    if not isinstance(asked, (list, tuple)) or not asked:
        raise InputError.bad("models", f"one or more {expected}", asked)
    for name in asked:
        if name not in ZOO_NAMES or asked.count(name) > 1:
            raise InputError.bad("models", expected, name)
    return tuple(asked)


def _zoo_sections(names: list[str], zoo: Sequence[str]) -> tuple[list[str], list[str]]:
    """``names`` without the sections the default models ``zoo`` cannot give (ranking needs 2
    models, fastpd a tree ensemble), and those left out; refused if that leaves none asked."""
    cannot = {"ranking": 0 < len(zoo) < 2, "fastpd": zoo and not set(zoo) & set(ZOO_TREE_ENSEMBLES)}
    left_out = [name for name in names if cannot.get(name)]
    if left_out and left_out == names:
        why = {"ranking": "ranking compares 2 or more models", "fastpd": _NO_TREE}
        raise InputError(
            f"sections: expected a section an audit of {', '.join(zoo)} builds, got "
            f"{', '.join(names)} ({'; '.join(why[name] for name in names)})",
            argument="sections",
        )
    return [name for name in names if name not in left_out], left_out


def _zoo_note(ctx: AuditContext, name: str) -> str | None:
    """The overview's note on a section the trained default models cannot give."""
    if name == "fastpd":  # the note of a --model logistic regression
        return section_registry.load_section("fastpd").not_built_note(ctx)
    trained = ", ".join(ctx.models)
    return f"No ranking section: it ranks 2 or more models, and this audit trains one ({trained})."


def _without_fastpd(names: list[str], ctx: AuditContext, steps: _Steps) -> list[str]:
    """``names`` without fastpd when the given model is no tree ensemble (noted in the report;
    refused naming ``sections`` when fastpd was the only one asked)."""
    if "fastpd" not in names:
        return names
    note = section_registry.load_section("fastpd").not_built_note(ctx)
    if note is None:
        return names
    if names == ["fastpd"]:
        message = f"sections: expected a section this audit builds, got fastpd. {note}"
        raise InputError(message, argument="sections")
    ctx.notes.append(note)
    steps.total -= 1
    return [name for name in names if name != "fastpd"]


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


def _meta(ctx: AuditContext, test_size: float, sections, models) -> dict:
    how = {
        "zoo": f"default models trained on {1 - test_size:.0%} of the rows, audited on the rest",
        "model": "the given model, audited on every row",
        "predictions": "the given predictions, audited on every row",
    }[ctx.mode]
    meta = {
        "dataset": ctx.dataset,
        "label": ctx.label,
        "group": ctx.group,
        "models": list(ctx.predictions),
        "audit": how,
        # a --pred or --model audit trains nothing (the page said "train 0")
        "rows": {"train": ctx.n_train, "test": ctx.n_test}
        if ctx.mode == "zoo"
        else {"audited": ctx.n_test},
        "split": ctx.split,
        "random_state": ctx.random_state,
        "files": [ctx.files["predictions"], *ctx.files["models"].values()],
    }
    if ctx.split is None:  # a --pred or --model audit splits nothing (the page said "Split None")
        del meta["split"]
    if sections is not None:  # a report of some sections says so (it read as a whole audit)
        meta["sections_asked"] = [sections] if isinstance(sections, str) else list(sections)
    if models is not None:  # some of the default models: the report says they were chosen
        meta["models_asked"] = list(ctx.models)
    return meta


# --- the three modes ------------------------------------------------------------------------


def _context_from_predictions(table: AuditTable, seed: int) -> AuditContext:
    frame = table.frame
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    pred = frame[table.pred].to_numpy()
    labels = class_labels(y, pred)
    # the label's classes (not those only predicted) first: a label of one class is the label's
    # fault, not the predictions' (which then have "too many" classes the label lacks)
    check_classes_and_groups(class_labels(y), g)
    check_predicted_labels(y, pred, "pred")
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
        rows_test=table.row_ids,
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
    columns = model_columns(estimator, frame, table.features)
    X = frame[columns]
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    pred = predict_labels(estimator, X, "model")
    labels = class_labels(y, pred, argument="model")
    check_class_values(pred, "model", y)  # a regressor's numbers are not predicted classes
    check_classes_and_groups(class_labels(y), g)
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
        rows_test=table.row_ids,
    )


def _context_from_zoo(table: AuditTable, names, test_size, seed, steps, tell_plan) -> AuditContext:
    frame = table.frame
    if not table.features:
        raise InputError.bad(
            "data", "at least one feature column besides the label, group and pred", "none"
        )
    y = frame[table.label].to_numpy()
    g = frame[table.group].to_numpy()
    check_classes_and_groups(class_labels(y), g)
    train, test, notes, split = split_rows(y, g, test_size, seed)
    y_train, y_test = y[train], y[test]
    if len(np.unique(y_train)) < 2:
        raise InputError.bad(
            "test_size", "a split leaving 2 or more classes to train on", test_size
        )
    # the audited rows are the test rows: DCP needs 2 groups there, whatever the whole table has
    check_test_groups(class_labels(y), g, test, test_size)
    features, dropped = usable_features(frame[table.features].iloc[train])
    if not features:
        raise InputError(
            "data: expected at least one feature column with 2 or more values in the training "
            f"rows, got only empty or single-valued ones ({', '.join(map(str, table.features))})",
            argument="data",
        )
    X = frame[features]
    X_train, X_test = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
    zoo = {name: default_zoo(seed)[name] for name in names}  # in the order asked
    tell_plan(list(zoo), len(train), len(test))
    models, predictions = {}, {}
    for name, estimator in zoo.items():
        steps.start(f"training {name}")
        pipeline = make_pipeline(estimator, X_train).fit(X_train, y_train)
        models[name] = pipeline
        predictions[name] = predict_labels(pipeline, X_test, name)
        steps.finish()
    labels = class_labels(y, *predictions.values())
    probabilities = {name: aligned_probabilities(m, X_test, labels) for name, m in models.items()}
    return AuditContext(
        dataset=table.name,
        label=table.label,
        group=table.group,
        labels=labels,
        feature_names=list(features),
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
        split=split,
        notes=table.notes + notes + dropped + imputation_note(X),
        rows_test=table.row_ids[test],
    )

"""What an audit leaves in its output directory besides the report: models and predictions.

- ``models/<name>.skops``: each model trained by the audit (the default zoo), saved with skops
  and readable with :func:`trustlab.audit.models.load_classifier`;
- ``predictions.csv``: one row per audited row: ``row`` (the row's index in the input table),
  the label and group columns, each model's predicted label and, where the model has
  ``predict_proba``, its class probabilities (``<model>:proba:<class>``). A model named like
  the label or group column gets the column ``pred:<model>``; ``row`` is ``input_row`` when a
  column is already called ``row`` (``input_row_2``, ... when that is taken too).

An output directory that already holds an audit is not written over unless the caller says so
(``overwrite=True``, ``--overwrite``): a re-run never mixes its files with an older run's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trustlab._results import output_dir, write_atomic
from trustlab.errors import InputError

__all__ = [
    "PREDICTIONS_NAME",
    "MODELS_DIR",
    "prepare_output",
    "previous_audit",
    "clear_previous",
    "save_models",
    "save_predictions",
    "predictions_frame",
]

PREDICTIONS_NAME = "predictions.csv"
MODELS_DIR = "models"
_REPORT_FILES = ("report.json", "report.html", PREDICTIONS_NAME)


def prepare_output(
    out, overwrite: bool, keep: Iterable[str | os.PathLike] = (), models: Iterable[str] = ()
) -> Path:
    """The output directory, checked but not yet created (bad input leaves no empty folder
    behind); refused when it holds an audit (unless ``overwrite``), is a file, or would have a
    file of ``keep`` (the table or model being audited) written over, as
    :func:`clear_previous` refuses it, or a model file the earlier audit did not write (one of
    ``models``, the names of the models this audit saves), but before any training. Nothing is
    deleted here: :func:`clear_previous` creates it, or deletes the earlier audit's files, once
    the new audit is ready to write."""
    if not isinstance(out, (str, os.PathLike)):
        raise InputError.bad("out", "a directory path", out)
    path = Path(out)
    _refuse_writing_over(path, keep)
    _refuse_writing_over_others(path, models)
    previous = previous_audit(path)
    if previous is not None and not overwrite:
        raise InputError(
            f"out: {path} already holds an audit ({previous}); pass --overwrite "
            "(overwrite=True in Python) to replace it, or choose another directory",
            argument="out",
        )
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise InputError.bad("out", "a directory that can be created", str(path))
    return path


def previous_audit(out: str | os.PathLike) -> str | None:
    """What earlier audit ``out`` holds (``"report.json of chile, 2025-01-02T03:04:05+00:00"``,
    or the names of its files), or None when it holds none."""
    out = Path(out)
    previous = _previous_outputs(out)
    if not previous:
        return None
    try:
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        meta = report["meta"]
        state = "" if report.get("complete", True) else ", unfinished"
        return f"report.json of {meta['dataset']}, {meta['created']}{state}"
    except (OSError, ValueError, KeyError, TypeError):
        return ", ".join(previous)


def clear_previous(out: Path, keep: Iterable[str | os.PathLike] = ()) -> list[str]:
    """Create ``out`` if needed and delete the files an earlier audit wrote into it (and only
    those); return their names.

    Those files are report.json, report.html, predictions.csv and the models the earlier
    report.json lists in ``meta.files`` (without a readable report.json: the default models'
    ``models/<name>.skops``, the only model files an audit writes). Any other file, and any
    file in ``keep`` (the model or table being audited), stays; one that the audit would write
    over (``--data out/predictions.csv``, an earlier audit's predictions audited into the same
    folder) is an InputError naming ``out``, before anything is deleted or written.
    """
    kept = _refuse_writing_over(out, keep)
    output_dir(out, "out")
    removed = []
    for name in [*_REPORT_FILES, *_previous_models(out)]:
        target = out / name
        if target.is_file() and _resolved(target) not in kept:
            target.unlink()
            removed.append(name)
    models = out / MODELS_DIR
    if models.is_dir() and not any(models.iterdir()):
        models.rmdir()
    return removed


def _refuse_writing_over(out: str | os.PathLike, keep: Iterable[str | os.PathLike]) -> set[Path]:
    """The resolved ``keep`` paths; an InputError naming ``out`` when the audit's own files
    (report.json, report.html, predictions.csv) would be written over one of them."""
    kept = {_resolved(p) for p in keep}
    for name in _REPORT_FILES:
        if _resolved(Path(out) / name) in kept:
            raise InputError(
                f"out: {Path(out) / name} is a file being audited, and the audit writes its own "
                f"{name} there: choose another directory (or move the file)",
                argument="out",
            )
    return kept


def _refuse_writing_over_others(out: Path, models: Iterable[str]) -> None:
    """An InputError naming ``out`` when saving one of ``models`` would write over a file that
    :func:`clear_previous` keeps (one the earlier audit's report.json does not list: the
    ``--model`` of an earlier audit, a file of the user's)."""
    earlier = None
    for name in models:
        relative = f"{MODELS_DIR}/{_file_name(name)}.skops"
        if not (out / relative).is_file():
            continue
        earlier = set(_previous_models(out)) if earlier is None else earlier
        if relative not in earlier:
            raise InputError(
                f"out: {out / relative} is not a file of the earlier audit in {out} (its "
                f"report.json does not list it), and this audit saves its trained {name} "
                "there: move the file or choose another directory",
                argument="out",
            )


def _resolved(path: str | os.PathLike) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def _previous_models(out: Path) -> list[str]:
    """``models/<name>.skops`` files the earlier audit in ``out`` wrote."""
    from trustlab.audit.models import ZOO_NAMES

    try:
        files = json.loads((out / "report.json").read_text(encoding="utf-8"))["meta"]["files"]
        listed = [str(f) for f in files]
    except (OSError, ValueError, KeyError, TypeError):
        listed = [f"{MODELS_DIR}/{name}.skops" for name in ZOO_NAMES]
    return [
        f
        for f in listed
        if f.startswith(f"{MODELS_DIR}/")
        and f.endswith(".skops")
        and "/" not in f[len(MODELS_DIR) + 1 :]
        and ".." not in f
    ]


def _previous_outputs(out: Path) -> list[str]:
    if not out.is_dir():
        return []
    found = [name for name in _REPORT_FILES if (out / name).is_file()]
    models = out / MODELS_DIR
    if models.is_dir() and any(models.glob("*.skops")):
        found.append(MODELS_DIR)
    return found


def save_models(out: Path, models: dict[str, Any]) -> dict[str, str]:
    """Save each model as ``out/models/<name>.skops``; return name -> path relative to ``out``."""
    import skops.io as sio

    if not models:
        return {}
    folder = output_dir(out / MODELS_DIR, "out")
    saved = {}
    for name, model in models.items():
        relative = f"{MODELS_DIR}/{_file_name(name)}.skops"
        write_atomic(folder.parent / relative, lambda tmp, model=model: sio.dump(model, tmp))
        saved[name] = relative
    return saved


def _file_name(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name)).strip(".")
    return safe or "model"


def predictions_frame(ctx) -> pd.DataFrame:
    """The audited rows with their ids, label, group, predictions and class probabilities."""
    row_ids = ctx.rows_test if ctx.rows_test is not None else np.arange(ctx.n_test)
    taken = {ctx.label, ctx.group, *ctx.predictions}
    id_column = next(n for n in ("row", "input_row", *_more_ids(len(taken))) if n not in taken)
    columns: dict[str, Any] = {
        id_column: np.asarray(row_ids),
        ctx.label: ctx.y_test,
        ctx.group: ctx.g_test,
    }
    for name, pred in ctx.predictions.items():  # a model file named like the label: "pred:y"
        columns[name if name not in columns else f"pred:{name}"] = pred
    for name, proba in ctx.probabilities.items():  # a group column named "m:proba:yes" too
        for j, label in enumerate(ctx.labels.tolist()):
            key = f"{name}:proba:{label}"
            columns[key if key not in columns else f"pred:{key}"] = proba[:, j]
    return pd.DataFrame(columns)


def _more_ids(n: int) -> list[str]:
    """Names for the row id when ``row`` and ``input_row`` are the label's, group's or a
    model's: ``input_row_2``, ``input_row_3``, ... (one of ``n + 1`` is free)."""
    return [f"input_row_{k}" for k in range(2, n + 3)]


def save_predictions(out: Path, ctx) -> str:
    """Write ``out/predictions.csv``; return its name (relative to ``out``)."""
    frame = predictions_frame(ctx)
    write_atomic(out / PREDICTIONS_NAME, lambda tmp: frame.to_csv(tmp, index=False))
    return PREDICTIONS_NAME

"""Eval logs as a trustlab result, and the hooks through which a task adds its own report tables.

:func:`read_logs` reads every inspect log in a folder (``read_eval_log``) into :class:`EvalLogs`:
per log the task, model, status, samples and metrics. A capability adds its own tables and
figures with :func:`register_report_hook`: a function of the task's logs that returns
:class:`ReportText`, :class:`ReportTable` and :class:`ReportFigure` blocks (plain data; the page
builder turns them into report blocks), kept in ``EvalLogs.extras`` under the task name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustlab._checks import check_string
from trustlab._lazy import require
from trustlab._results import Result, internal_field
from trustlab.errors import InputError
from trustlab.evals._counts import planned_samples
from trustlab.evals.registry import BUILTIN_TASKS
from trustlab.evals.run import (
    errored_samples,
    finished_by,
    local_path,
    metrics_of,
    on_models,
    roles_of,
    unreadable_reason,
)

__all__ = [
    "EvalLogs",
    "ReportFigure",
    "ReportTable",
    "ReportText",
    "read_logs",
    "register_report_hook",
    "report_hooks",
]


@dataclass(frozen=True)
class ReportText:
    """A paragraph of a task's report section."""

    text: str


@dataclass(frozen=True)
class ReportTable:
    """A table of a task's report section (``rows``: one list of cells per row)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    caption: str = ""

    def as_record(self) -> dict[str, Any]:
        return {
            "caption": self.caption,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
        }


@dataclass(frozen=True)
class ReportFigure:
    """A figure of a task's report section: ``draw(ax)`` draws on a matplotlib Axes."""

    draw: Callable[[Any], Any]
    caption: str


_HOOKS: dict[str, Callable[[list[Any]], Sequence[Any]]] = {}


def register_report_hook(task: str, hook: Callable[[list[Any]], Sequence[Any]]) -> None:
    """Let ``hook(logs)`` add blocks to the report of ``task``'s logs.

    ``task`` is the task name as logs record it (``log.eval.task``; a ``trustlab/`` or other
    package prefix is ignored, except that a built-in task's name, such as ``casebench``, stands
    for trustlab's task only: another package's or a task file's ``casebench`` logs get no
    hook). ``hook`` receives that task's inspect ``EvalLog`` objects (samples
    included) and returns a list of :class:`ReportText`, :class:`ReportTable` and
    :class:`ReportFigure`.

    Examples
    --------
    >>> def counts(logs):
    ...     return [ReportTable(["model", "samples"], [[g.eval.model, len(g.samples)] for g in logs])]
    >>> register_report_hook("demo", counts)
    """
    check_string(task, "task")
    if not callable(hook):
        raise InputError.bad("hook", "a function of a task's logs returning report blocks", hook)
    _HOOKS[_short(task)] = hook


def report_hooks() -> dict[str, Callable[[list[Any]], Sequence[Any]]]:
    """The registered hooks, task name -> hook."""
    return dict(_HOOKS)


@dataclass(frozen=True)
class EvalLogs(Result):
    """The inspect logs of a folder, one dict per log.

    Attributes
    ----------
    log_dir : str
    logs : tuple of dict
        ``path``, ``task``, ``model``, ``roles`` (role -> model, {} without roles), ``status``,
        ``samples`` (planned, epochs counted),
        ``completed`` (samples finished; of an unfinished log, those it holds),
        ``errored_samples`` (of a finished log, the samples that ended in an error, which a task
        that tolerates them, inspect's ``fail_on_error``, leaves out of its metrics), ``metrics``
        ({"scorer/metric": value}; ``scorer[reducer]/metric`` for a scorer with several epoch
        reducers), ``error`` (None unless the eval failed), ``created`` and
        ``finished_by`` (of an unfinished log that a successful retry, or a later run with the
        same settings, finished: that log's file name and which of the two; else None).
    extras : dict
        Task name -> the blocks its report hook returned (internal; the page shows them,
        ``to_dict()`` holds the tables, each as ``ReportTable.as_record()``).
    """

    log_dir: str
    logs: tuple[dict[str, Any], ...]
    extras: dict[str, tuple[Any, ...]] = internal_field(default_factory=dict)

    _dict_extras = ("extra_tables",)

    @property
    def extra_tables(self) -> dict[str, list[dict[str, Any]]]:
        return {
            task: [b.as_record() for b in blocks if isinstance(b, ReportTable)]
            for task, blocks in self.extras.items()
        }

    @property
    def errored(self) -> tuple[dict[str, Any], ...]:
        return tuple(log for log in self.logs if log["status"] == "error")

    def summary(self) -> str:
        lines = [f"{len(self.logs)} log(s) in {self.log_dir}"]
        for log in self.logs:
            metrics = ", ".join(f"{k} {v:.4g}" for k, v in log["metrics"].items())
            lines.append(
                f"  {log['task']} on {on_models(log)}: {log['status']}, "
                f"{log['completed']}/{log['samples']} samples; {metrics or 'no metrics'}"
            )
            if log["errored_samples"]:
                lines.append(
                    f"    {log['errored_samples']} sample(s) errored, left out of the metrics"
                )
            if log["error"]:
                lines.append(f"    error: {log['error']}")
            if log["finished_by"]:
                lines.append(f"    since finished by {log['finished_by']}")
        return "\n".join(lines)


def read_logs(log_dir: str | os.PathLike) -> EvalLogs:
    """Read every inspect log in ``log_dir`` (oldest first) and run the tasks' report hooks.

    Examples
    --------
    >>> read_logs("logs").summary()  # doctest: +SKIP
    """
    folder = Path(log_dir)
    if not folder.is_dir():
        raise InputError.bad("log_dir", "a folder of inspect logs", str(log_dir))
    require("inspect_ai", "evals")
    from inspect_ai.log import list_eval_logs, read_eval_log

    infos = list_eval_logs(str(folder), recursive=True)
    if not infos:
        raise InputError.bad(
            "log_dir", "a folder holding inspect logs (.eval or .json)", str(log_dir)
        )
    headers = sorted((_header(i) for i in infos), key=lambda h: h.eval.created)
    extras: dict[str, tuple[Any, ...]] = {}
    for task in dict.fromkeys(_hook_key(h.eval.task) for h in headers):
        if task is None:
            continue
        hook = _HOOKS.get(task)
        if hook is None and task in BUILTIN_TASKS:  # a built-in task registers its hook on import
            importlib.import_module(BUILTIN_TASKS[task][0].partition(":")[0])
            hook = _HOOKS.get(task)
        if hook is None:
            continue
        full = [read_eval_log(h.location) for h in headers if _hook_key(h.eval.task) == task]
        blocks = tuple(hook(full))
        for block in blocks:
            if not isinstance(block, (ReportText, ReportTable, ReportFigure)):
                raise InputError.bad(
                    f"report hook of {task!r}", "ReportText/Table/Figure blocks", block
                )
        extras[task] = blocks
    return EvalLogs(str(folder), tuple(_describe(h, headers) for h in headers), extras)


def _header(info: Any) -> Any:
    """A log's header; a file with a log's name that inspect cannot read (truncated when its
    process was killed, say) is bad input naming the file."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(info, header_only=True)
    except (ValueError, OSError) as exc:
        reason = unreadable_reason(exc)
        raise InputError(
            f"log_dir: {local_path(info.name)} is not a readable inspect log ({reason}); move it out of the "
            "folder",
            argument="log_dir",
        ) from None


def _describe(log: Any, headers: list[Any]) -> dict[str, Any]:
    if log.results is not None:
        samples, completed = log.results.total_samples, log.results.completed_samples
    else:  # an unfinished log (interrupted, errored): count the samples it holds
        samples, completed = planned_samples(log.eval), _finished(log.location)
    return {
        "path": local_path(log.location),
        "task": log.eval.task,
        "model": log.eval.model,
        "roles": roles_of(log),
        "status": log.status,
        "samples": samples,
        "completed": completed,
        "errored_samples": errored_samples(log),
        "metrics": metrics_of(log),
        "error": (log.error.message.strip().splitlines() or [""])[-1] if log.error else None,
        "created": log.eval.created,
        "finished_by": _finished_by(log, headers),
    }


def _finished_by(log: Any, headers: list[Any]) -> str | None:
    """Of an unfinished log, the successful log that finished it: its retry, or a later run with
    the same settings (as ``run_eval`` counts them: it resumes neither such log)."""
    later = finished_by(log, headers)
    if later is None:
        return None
    how = "its retry" if later.eval.task_id == log.eval.task_id else "a later run, same settings"
    return f"{Path(later.location).name} ({how})"


def _finished(location: str) -> int:
    """The samples a log holds that finished without an error."""
    from inspect_ai.log import read_eval_log_sample_summaries

    summaries = read_eval_log_sample_summaries(location)
    return sum(1 for s in summaries if s.completed and s.error is None)


def _short(task: str) -> str:
    return task.split("/")[-1]


def _hook_key(task: str) -> str | None:
    """The report hook a log of ``task`` goes to: its short name, except that the name of a
    built-in task is trustlab's only (``trustlab/casebench``): another package's or task file's
    ``casebench`` gets no hook (trustlab's would misread its samples)."""
    short = _short(task)
    if short in BUILTIN_TASKS and task != f"trustlab/{short}":
        return None
    return short

"""The HTML page of a folder of inspect eval logs (``trustlab eval report LOGDIR``).

A standalone page, not a section of the tabular audit: it reads a
:class:`trustlab.evals.EvalLogs` and computes nothing itself. One section lists every log (task,
model, status, samples, metrics); errored or unfinished logs are listed as such, with their error,
and their numbers are never shown as results. Each task with a report hook
(:func:`trustlab.evals.register_report_hook`) gets a section of the blocks its hook returned.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from trustlab.evals import ReportFigure, ReportTable, ReportText
from trustlab.report import Figure, Paragraph, Report, Section, Table

__all__ = ["build_page", "write_page"]

LOGS_TEXT = (
    "Each row is one inspect log (one task on one model), named by its file. Metrics are "
    "inspect's, per scorer; 'errored' counts the samples that ended in an error, which a task "
    "tolerating errors leaves out of its metrics. Open the logs themselves, sample by sample, "
    "with: inspect view --log-dir {log_dir}"
)


def build_page(logs: Any, title: str | None = None) -> Report:
    """The logs of an :class:`~trustlab.evals.EvalLogs` and its tasks' extra blocks as a
    :class:`~trustlab.report.Report`."""
    report = Report(title or f"Evaluations in {logs.log_dir}", {"log folder": logs.log_dir})
    report.add(_logs_section(logs))
    for task, blocks in logs.extras.items():
        report.add(_task_section(task, blocks))
    return report


def write_page(
    logs: Any, out_dir: str | os.PathLike, title: str | None = None
) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.json`` of ``logs`` into ``out_dir``; return the paths."""
    return build_page(logs, title).write(out_dir)


def _logs_section(logs: Any) -> Section:
    names = sorted({k for log in logs.logs if log["status"] == "success" for k in log["metrics"]})
    rows = []
    for log in logs.logs:
        ok = log["status"] == "success"
        rows.append(
            [log["task"], log["model"], log["status"], log["completed"], log["samples"]]
            + [log.get("errored_samples", 0)]
            + [log["metrics"].get(k) if ok else None for k in names]
            + [Path(log["path"]).name]  # two runs of one task and model stay apart
        )
    blocks: list[Any] = [Paragraph(LOGS_TEXT.format(log_dir=shlex.quote(str(logs.log_dir))))]
    failed = [log for log in logs.logs if log["status"] != "success"]
    for log in failed:
        blocks.append(
            Paragraph(
                f"{Path(log['path']).name}: {log['status']}"
                + (f": {log['error']}" if log["error"] else " (unfinished)")
                + "; its numbers are not results"
                + (f"; since finished by {log['finished_by']}." if log.get("finished_by") else "."),
                kind="warning",
            )
        )
    for log in logs.logs:
        if log["status"] == "success" and log.get("errored_samples"):
            blocks.append(
                Paragraph(
                    f"{Path(log['path']).name}: {log['errored_samples']} sample(s) errored and "
                    "are left out of its metrics (the task tolerates errors: inspect's "
                    "fail_on_error).",
                    kind="warning",
                )
            )
    columns = ["task", "model", "status", "completed", "samples", "errored", *names, "log"]
    blocks.append(Table(columns, rows, "Eval logs"))
    ok = len(logs.logs) - len(failed)
    return Section(
        "logs",
        "Eval logs",
        blocks,
        {"logs": list(logs.logs)},
        summary=f"{len(logs.logs)} log(s): {ok} successful, {len(failed)} errored or unfinished.",
    )


def _task_section(task: str, blocks: Any) -> Section:
    from matplotlib.figure import Figure as MplFigure

    shown: list[Any] = []
    tables = []
    for block in blocks:
        if isinstance(block, ReportText):
            shown.append(Paragraph(block.text))
        elif isinstance(block, ReportTable):
            shown.append(Table(list(block.columns), [list(r) for r in block.rows], block.caption))
            tables.append(block.as_record())
        elif isinstance(block, ReportFigure):
            figure = MplFigure(figsize=(6.4, 4.2))
            block.draw(figure.add_subplot())
            shown.append(Figure(figure, block.caption))
    ident = "task-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in task)
    return Section(ident, f"Task {task}", shown, {"tables": tables})

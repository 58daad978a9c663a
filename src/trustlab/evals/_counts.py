"""Sample counts of an inspect log, read from its header (and its samples where it holds them):
shared by :func:`~trustlab.evals.run.run_eval` and :func:`~trustlab.evals.logs.read_logs`; and
the name by which the tasks' report rows name a log."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def log_file_name(log: Any) -> str:
    """The log's file name (its task id when it has no location): a report row names its log by
    it, so two runs of one model stay apart."""
    return Path(log.location).name if getattr(log, "location", None) else log.eval.task_id


def planned_samples(spec: Any) -> int | None:
    """The samples an eval was to run (each epoch counted), from its header; None if unknown."""
    n, config = spec.dataset.samples, spec.config
    if n is None:
        return None
    if config.sample_id is not None:
        n = len(config.sample_id) if isinstance(config.sample_id, list) else 1
    elif isinstance(config.limit, int):
        n = min(n, config.limit)
    elif config.limit is not None:  # (start, stop)
        n = max(0, min(n, config.limit[1]) - config.limit[0])
    return n * (config.epochs or 1)


def errored_samples(log: Any) -> int:
    """The samples of a finished log that ended in an error (each epoch counted): those a task
    that tolerates errors (``fail_on_error=False`` or a fraction) left out of its metrics
    (all of them: no results then, so counted from the samples, or, in a log written without
    its samples (inspect's ``log_samples=False``, ``--no-log-samples``), from its header: every
    planned sample)."""
    if log.results is not None:
        return max(0, log.results.total_samples - log.results.completed_samples)
    if log.status != "success":
        return 0
    if log.eval.config.log_samples is False:  # no samples kept: a success without results
        return planned_samples(log.eval) or 0  # is one whose every sample errored
    from inspect_ai.log import read_eval_log_sample_summaries as summaries

    held = log.samples if log.samples is not None else summaries(log.location)
    return sum(1 for s in held if s.error)


def without_samples(logs: list[Any]) -> tuple[int, str]:
    """How many of these logs finished but were written without their samples (inspect's
    ``--no-log-samples``), and a task report's phrase for them ("" for none): such a log is
    neither unfinished nor errored, but a report that needs each answer leaves it out."""
    bare = sum(log.status == "success" and not log.samples for log in logs)
    if not bare:
        return 0, ""
    return bare, (
        f"; {bare} finished log(s) without samples left out (written with inspect's "
        "--no-log-samples; the report needs each answer: rerun without it)"
    )

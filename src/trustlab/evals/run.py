"""``run_eval``: an inspect task on one or more models, resumable, with errors reported as errors.

It wraps ``inspect_ai.eval``. Before running, the log folder is searched for an unfinished log of
the same task and model (status "started", "cancelled" or "error", not already followed by a
successful retry or a later successful run with the same settings); such a log is resumed with
inspect's ``eval_retry``, which keeps the samples that were finished. An eval whose log ends with
status "error" raises :class:`~trustlab.errors.BackendError` naming the log and its error: it is
never returned as a result. Ctrl-C raises ``KeyboardInterrupt`` (inspect catches it, writes the log
as "cancelled" and returns none); the next run resumes that log. A task argument named for data
(``data``, ``*_data``, ``*path``, ``*file``, ``*dir``, ``*folder``) that names a file or folder is
logged with a sha256 of its content: an unfinished log whose file changed since is refused.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustlab._checks import check_positive_int, repeated
from trustlab._lazy import require
from trustlab._results import Result, output_dir
from trustlab.errors import BackendError, InputError
from trustlab.evals._counts import errored_samples
from trustlab.evals.registry import (
    BUILTIN_TASKS,
    DATA_DIGESTS,
    REQUIRED_ROLES,
    check_roles,
    data_digests,
    resolve_task,
)

__all__ = ["EvalRun", "run_eval", "UNFINISHED", "errored_samples"]

UNFINISHED = ("started", "cancelled", "error")


@dataclass(frozen=True)
class EvalRun(Result):
    """The logs one :func:`run_eval` call wrote.

    Attributes
    ----------
    log_dir : str
    logs : tuple of dict
        One per model, in the order of ``model``: ``path``, ``task``, ``model``, ``roles``
        (role -> model, {} without roles), ``status``,
        ``samples`` (completed), ``errored_samples`` (samples that ended in an error, which
        a task that tolerates them, inspect's ``fail_on_error``, leaves out of its metrics),
        ``metrics`` ({scorer/metric: value}) and ``resumed`` (the path of the unfinished log it
        continued, as ``path`` gives a log, or None).
    """

    log_dir: str
    logs: tuple[dict[str, Any], ...]

    def summary(self) -> str:
        lines = []
        for log in self.logs:
            metrics = ", ".join(f"{k} {v:.4g}" for k, v in log["metrics"].items())
            again = f" (resumed {Path(log['resumed']).name})" if log["resumed"] else ""
            n = log["errored_samples"]
            errored = f" ({n} more errored, left out of the metrics)" if n else ""
            lines.append(
                f"{log['task']} on {on_models(log)}: {log['status']}, {log['samples']} samples"
                f"{errored}{again}; {metrics or 'no metrics'}"
            )
        lines.append(  # quoted for a shell: a folder name with a space is one argument
            f"logs in {self.log_dir}; open them with: inspect view --log-dir "
            + shlex.quote(self.log_dir)
        )
        return "\n".join(lines)


def run_eval(
    task: str,
    model: str | Sequence[str],
    *,
    log_dir: str | os.PathLike,
    limit: int | None = None,
    task_args: dict[str, Any] | None = None,
    model_args: dict[str, Any] | None = None,
    model_roles: dict[str, str] | None = None,
    resume: bool = True,
    on_resume: Callable[[str], None] | None = None,
) -> EvalRun:
    """Run ``task`` on each model with inspect; resume unfinished runs; raise on errored evals.

    Parameters
    ----------
    task : str
        A trustlab task name (see :func:`~trustlab.evals.tasks`), a task file, or
        ``file.py@task``.
    model : str or sequence of str
        inspect model names: ``trustlab/<local model>``, ``openai-api/<service>/<model>``, ...
    log_dir : path
        Where inspect writes its logs (created if needed).
    limit : int, optional
        At most this many samples per model.
    task_args, model_args : dict, optional
        Passed to the task function and the model providers (``-T`` and ``-M`` in inspect).
    model_roles : dict, optional
        inspect model roles, role -> model name: ``{"grader": "openai-api/..."}`` is the judge
        of the tasks that have one (``trustlab eval run ... --judge MODEL``). A built-in task
        refuses a role it does not take (``registry.TASK_ROLES``), which it would ignore.
    resume : bool, default True
        Continue an unfinished log of the same task and model in ``log_dir`` (inspect's
        ``eval_retry``) instead of starting afresh, if it ran with the same task arguments,
        model arguments, limit and roles (``eval_retry`` replays the log's own); a log that ran
        with other settings is left alone, and ``on_resume`` is told.
    on_resume : callable, optional
        Called with a message before each resumed log.

    Returns
    -------
    EvalRun

    Raises
    ------
    BackendError
        When an eval ends with status "error" (the message names the log and the error).

    Examples
    --------
    >>> run = run_eval("demo", "trustlab/smollm2-135m-instruct", log_dir="logs", limit=2)  # doctest: +SKIP
    >>> run.logs[0]["status"]  # doctest: +SKIP
    'success'
    """
    if isinstance(task, str) and task.removeprefix("trustlab/") in BUILTIN_TASKS:
        # inspect's registry name of a built-in task is that task: its -T keys and roles are checked
        task = task.removeprefix("trustlab/")
    models = [model] if isinstance(model, str) else list(model)
    if not models or not all(isinstance(m, str) and "/" in m for m in models):
        raise InputError.bad("model", "inspect model names such as trustlab/<model>", model)
    twice = repeated(models)
    if twice:  # the same eval twice (and one unfinished log retried twice)
        raise InputError.bad("model", "each model once", ", ".join(twice) + " more than once")
    if limit is not None:
        check_positive_int(limit, "limit")
    for name, value in (("task_args", task_args), ("model_args", model_args)):
        if value is not None and not isinstance(value, dict):
            raise InputError.bad(name, "a dict of keyword arguments", value)
    if model_roles is not None and not isinstance(model_roles, dict):
        raise InputError.bad("model_roles", "a dict role -> inspect model name", model_roles)
    roles = dict(model_roles or {})
    for role, role_model in roles.items():
        if not (isinstance(role, str) and isinstance(role_model, str) and "/" in role_model):
            raise InputError.bad(
                "model_roles", "role -> an inspect model name such as trustlab/<model>", role_model
            )
    check_roles(task, roles)
    for role in REQUIRED_ROLES.get(task, ()):
        if role not in roles:
            # named as the role (the CLI's --strong / --weak), not as the whole mapping
            argument = role_argument(role)
            raise InputError(
                f"{argument}: expected a model for the role '{role}' of the {task} task, got none",
                argument=argument,
            )
    resolved = resolve_task(task)
    if isinstance(resolved, str):
        resolved = _relative_file(resolved)
        _check_file_task_args(resolved, task_args or {})
    else:
        _check_task_args(resolved, task, task_args or {})
    inspect_ai = require("inspect_ai", "evals")
    provider = require("trustlab.evals.provider", "evals")  # the provider of trustlab/<model>
    stubs = require("trustlab.evals.misuse_stubs", "evals")  # trustlab-stub/strong, /weak
    # the roles first: without --model, the CLI's --weak is the model too, and named --weak
    named = [(role_argument(role), name) for role, name in roles.items()]
    for argument, name in named + [("model", m) for m in models]:
        source, _, rest = name.partition("/")
        if source == "trustlab":
            provider.check_model_name(rest, argument)
        elif source == stubs.STUB_PROVIDER and rest not in stubs.STUB_MODELS:
            raise InputError.bad(argument, stubs.STUB_EXPECTED, name)
    made = not Path(log_dir).exists()
    out = output_dir(log_dir, "log_dir")  # after the checks: bad input leaves no folder
    try:
        return _run(inspect_ai, out, task, resolved, models, task_args, model_args, limit,
                    roles, resume, on_resume)  # fmt: skip
    except BaseException:
        # inspect builds the task after the folder exists: a task argument it refuses (say
        # -T data=missing.csv) would leave an empty folder behind
        if made and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise


def _run(
    inspect_ai: Any, out: Path, task: str, resolved: Any, models: list[str],
    task_args: dict | None, model_args: dict | None, limit: int | None, roles: dict,
    resume: bool, on_resume: Callable[[str], Any] | None,
) -> EvalRun:  # fmt: skip
    logs, resumed, fresh = [], {}, []
    request = {
        "task arguments": task_args or {},
        "model arguments": model_args or {},
        "limit": limit,
        "model roles": roles,
    }
    headers = _readable_headers(out, on_resume) if resume else []
    ours, digests = _task_matcher(task, resolved), data_digests(task_args or {})
    plans = [(m, *_unfinished_log(headers, ours, m, request, digests)) for m in models]  # all first
    for name, old, other in plans:
        if other is not None and on_resume is not None:
            on_resume(f"not resuming {local_path(other[0])} ({name}): it ran with other {other[1]}; "
                      "starting afresh")  # fmt: skip
        if old is None:
            fresh.append(name)
            continue
        if on_resume is not None:
            on_resume(f"resuming {local_path(old)} ({name}) with inspect's eval_retry")
        retried = inspect_ai.eval_retry(old, log_dir=str(out), display="none")
        _raise_if_interrupted(retried, 1)
        for log in retried:
            resumed[log.location] = local_path(old)
            logs.append(log)
    if fresh:
        try:
            ran = inspect_ai.eval(
                resolved,
                model=fresh,
                task_args=task_args or {},
                model_args=model_args or {},
                limit=limit,
                log_dir=str(out),
                display="none",
                model_roles=roles or None,
                metadata={DATA_DIGESTS: digests} if digests else None,
            )
        except ValueError as exc:  # inspect: "Model API x of model 'x/y' not recognized."
            if "not recognized" not in str(exc):
                raise
            # the role whose model it is (--strong nosuch/x; the CLI's --weak is also the model)
            unknown = re.search(r"of model '([^']*)'", str(exc))
            argument = next(
                (role_argument(role) for role, name in roles.items()
                 if unknown and name == unknown.group(1)),
                "model",
            )  # fmt: skip
            raise InputError(
                f"{argument}: expected an inspect model name whose provider is installed "
                f"(trustlab/<model>, openai-api/<service>/<model>, ...), got {exc}",
                argument=argument,
            ) from None
        except Exception as exc:  # inspect's PrerequisiteError: no task at a path or of a name
            reason = str(exc).removeprefix("Error: ").strip()
            if type(exc).__name__ != "PrerequisiteError" or not (
                reason.startswith("No inspect tasks were found") or reason.endswith("not found.")
            ):
                raise
            raise InputError(
                f"task: expected a trustlab task, a task file or file.py@task that inspect finds, "
                f"got {task!r} ({reason})",
                argument="task",
            ) from None
        _raise_if_interrupted(ran, len(fresh))
        logs += ran
    _raise_on_errors(logs)
    _raise_on_dropped(logs, task_args or {}, retried=resumed)
    order = {name: i for i, name in enumerate(models)}  # as --model gave them, resumed or not
    logs.sort(key=lambda log: order.get(log.eval.model, len(models)))
    return EvalRun(str(out), tuple(_describe(log, resumed.get(log.location)) for log in logs))


def role_argument(role: str) -> str:
    """How an error names the model of ``role`` (``model_roles['weak']``)."""
    return f"model_roles[{role!r}]"


def _check_task_args(function: Callable[..., Any], task: str, task_args: dict[str, Any]) -> None:
    """Refuse task arguments the task function does not take (inspect drops them silently, so a
    misspelt ``-T`` would run with the default)."""
    import inspect

    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    unknown = [key for key in task_args if key not in parameters]
    if unknown:
        raise InputError.bad(
            "task_args",
            f"arguments of the {task} task ({', '.join(parameters) or 'none'})",
            ", ".join(unknown),
        )


def _check_file_task_args(spec: str, task_args: dict[str, Any]) -> None:
    """Refuse task arguments that no task of a task file takes (as :func:`_check_task_args`;
    inspect drops them with a warning that ``display="none"`` hides). The file's ``@task``
    functions and their parameters are read from its source as inspect finds them (top-level
    functions decorated ``@task`` or ``@task(name=...)``), without running it; a file that does
    not parse, or a task it does not define at top level, is left to inspect."""
    import ast

    file, _, name = spec.partition("@")
    if not task_args or not file.endswith(".py") or not os.path.isfile(file):
        return
    try:
        tree = ast.parse(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return
    found: dict[str, ast.arguments] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                registered = _task_name(node.name, decorator)
                if registered is not None:
                    found[registered] = node.args
    chosen = {key: value for key, value in found.items() if not name or key == name}
    if not chosen or "" in found or any(args.kwarg is not None for args in chosen.values()):
        return
    takes = {
        key: [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        for key, args in chosen.items()
    }
    unknown = [key for key in task_args if not any(key in params for params in takes.values())]
    if unknown:
        tasks = "; ".join(f"{key} ({', '.join(params) or 'none'})" for key, params in takes.items())
        which = "the task" if len(takes) == 1 else "a task"
        raise InputError.bad(
            "task_args", f"arguments of {which} in {Path(file).name}: {tasks}", ", ".join(unknown)
        )


def _task_name(function: str, decorator: Any) -> str | None:
    """The name inspect registers ``function`` under if ``decorator`` is its ``@task`` ("" when the
    name is computed), else None."""
    import ast

    if isinstance(decorator, ast.Name):
        return function if decorator.id == "task" else None
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name):
        if decorator.func.id != "task":
            return None
        for keyword in decorator.keywords:
            if keyword.arg == "name":  # "" when it is computed: not known before the file runs
                value = keyword.value
                return str(value.value) if isinstance(value, ast.Constant) else ""
        return function
    return None


def _relative_file(spec: str) -> str:
    """A task file spec relative to the working folder (inspect's loader globs it from there)."""
    file, at, name = spec.partition("@")
    if not file.endswith(".py") or not os.path.isabs(file):
        return spec
    if not os.path.isfile(file):
        raise InputError.bad("task", "an existing task file", file)
    return os.path.relpath(file) + at + name


def _raise_if_interrupted(logs: list[Any], expected: int) -> None:
    """Ctrl-C as Ctrl-C: inspect catches it, writes the log as "cancelled" (the next run resumes
    it) and returns no log, so the run would pass for a success (``eval run`` exited 0)."""
    if len(logs) < expected or any(log.status == "cancelled" for log in logs):
        raise KeyboardInterrupt


def _raise_on_errors(logs: list[Any]) -> None:
    failed = [log for log in logs if log.status != "success"]
    if failed:
        parts = [f"{log.location}: {log.status}: {_error_text(log)}" for log in failed]
        raise BackendError("the eval failed: " + "; ".join(parts))


def _raise_on_dropped(
    logs: list[Any], task_args: dict[str, Any], retried: Container[str] = ()
) -> None:
    """Refuse, once it ran, a task argument inspect dropped: another package's task
    (``pkg/task``) is found in inspect's registry, which has no public way to read its
    parameters before the run, and inspect drops a key the task does not take with a warning
    that ``display="none"`` hides; the log records the arguments it passed. (A key that one
    task of a file with several takes goes to that task only: it counts as passed.) The logs of
    the runs with the defaults are removed (a local one that is not a retry, in ``retried``):
    nobody asked for them, and ``eval report`` would show them as results."""
    passed = {key for log in logs for key in (log.eval.task_args_passed or {})}
    dropped = [key for key in task_args if key not in passed]
    if logs and dropped:
        names = ", ".join(dict.fromkeys(log.eval.task for log in logs))
        # nobody asked for the run with the defaults: its log would stand in LOG_DIR (the
        # default ./logs too) and in 'eval report' as a result, so a local one is removed
        kept = []
        for log in logs:
            where = local_path(log.location)
            if log.location in retried or "://" in where or not Path(where).is_file():
                kept.append(where)
            else:
                Path(where).unlink()
        left = f" (its log: {', '.join(kept)})" if kept else "; that run's log was removed"
        raise InputError(
            f"task_args: expected arguments of the task {names}, got "
            f"{', '.join(map(repr, dropped))}: inspect dropped it and ran with the defaults{left}",
            argument="task_args",
        )


def _error_text(log: Any) -> str:
    if log.error is None:
        return "no error message"
    return str(log.error.message).strip().splitlines()[-1] if log.error.message else "error"


def _describe(log: Any, resumed: str | None) -> dict[str, Any]:
    return {
        "path": log.location,
        "task": log.eval.task,
        "model": log.eval.model,
        "roles": roles_of(log),
        "status": log.status,
        "samples": log.results.completed_samples if log.results else 0,
        "errored_samples": errored_samples(log),
        "metrics": metrics_of(log),
        "resumed": resumed,
    }


def local_path(location: str) -> str:
    """A log's location as :func:`run_eval` gives it: a local file as its path (inspect's listing
    gives ``file://`` + the path, not quoted), anything else (``s3://...``) unchanged."""
    return location.removeprefix("file://")


def unreadable_reason(exc: BaseException) -> str:
    """Why inspect could not read a log, in one line: of its "Unable to read log file: <uri>"
    (a .json log cut short), the parser's reason ("parse error: premature EOF")."""
    cause = exc.__cause__ if str(exc).startswith("Unable to read log file") else None
    text = str(cause if cause is not None else exc).strip()
    return (text.splitlines() or [type(cause or exc).__name__])[0].strip()


def roles_of(log: Any) -> dict[str, str]:
    """The log's model roles, role -> model name (``{"strong": ..., "weak": ...}`` for misuse);
    {} for a task without roles."""
    roles = {}
    for role, config in (getattr(log.eval, "model_roles", None) or {}).items():
        configs = config if isinstance(config, list) else [config]
        roles[role] = ", ".join(str(getattr(c, "model", c)) for c in configs)
    return roles


def on_models(log: dict[str, Any]) -> str:
    """``model`` and, where the task has model roles, each role's model: "a (strong b, weak c)"."""
    roles = ", ".join(f"{role} {name}" for role, name in log.get("roles", {}).items())
    return f"{log['model']} ({roles})" if roles else str(log["model"])


def metrics_of(log: Any) -> dict[str, float]:
    """``{"scorer/metric": value}`` of a log's results (empty without results); a scorer scored
    by several epoch reducers (``Epochs(2, ["mean", "max"])``) is ``scorer[reducer]`` as inspect
    shows it, one key per reducer."""
    if log.results is None:
        return {}
    names = [score.name for score in log.results.scores]
    metrics = {}
    for score in log.results.scores:
        scorer = f"{score.name}[{score.reducer}]" if names.count(score.name) > 1 else score.name
        for name, metric in score.metrics.items():
            metrics[f"{scorer}/{name}"] = float(metric.value)
    return metrics


def _readable_headers(log_dir: Path, on_resume: Callable[[str], Any] | None) -> list[Any]:
    """The headers of the logs in ``log_dir``; a file with a log's name that inspect cannot read
    (truncated when its process was killed, say) cannot be resumed: it is skipped, and said."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    headers = []
    for info in list_eval_logs(str(log_dir)):
        try:
            headers.append(read_eval_log(info, header_only=True))
        except (ValueError, OSError) as exc:
            if on_resume is not None:
                reason = unreadable_reason(exc)
                on_resume(
                    f"not resuming {local_path(info.name)}: not a readable inspect log ({reason})"
                )
    return headers


def _unfinished_log(
    headers: list[Any], same_task: Callable[[Any], bool], model: str, request: dict[str, Any],
    digests: dict[str, str],
) -> tuple[str | None, tuple[str, str] | None]:  # fmt: skip
    """The newest unfinished log (of ``headers``) of the task (``same_task(log.eval)``) on
    ``model`` that no successful retry followed and that ran with the settings of ``request``
    (inspect's ``eval_retry`` replays a log's own); and, when the newest such log ran with other
    settings, (its location, what differs)."""
    ours = [h for h in headers if h.eval.model == model and same_task(h.eval)]
    candidates = [h for h in ours if h.status in UNFINISHED and finished_by(h, headers) is None]
    if not candidates:
        return None, None
    newest = max(candidates, key=lambda h: h.eval.created)
    differs = [
        key for key, value in _settings(newest.eval).items() if value != _plain(request[key])
    ]
    if differs:
        return None, (newest.location, " and ".join(differs))
    logged = (newest.eval.metadata or {}).get(DATA_DIGESTS, {})
    for key, digest in logged.items():  # same path, other content: its samples are of the old
        if digests.get(key) != digest:
            raise InputError(
                f"{key}: expected the content the unfinished run {local_path(newest.location)} "
                f"ran on, to resume it, got {request['task arguments'][key]} changed since; "
                "start afresh with --fresh (resume=False)",
                argument=key,
            )
    return newest.location, None


def finished_by(log: Any, headers: Sequence[Any]) -> Any | None:
    """The first of ``headers`` (inspect log headers) that finished the unfinished ``log``: a
    successful retry of it (the same task id), or a successful run of the same task and model
    with the same settings (``--fresh``, say) that started once ``log`` had stopped (times in
    whole seconds: one in the same second counts too); None if none did (or ``log`` finished)."""
    if log.status not in UNFINISHED:
        return None
    spec, stopped = log.eval, log.stats.completed_at or log.eval.created
    for later in headers:
        if later.status != "success":
            continue
        if later.eval.task_id == spec.task_id:
            return later
        if (
            later.eval.model == spec.model
            and later.eval.task == spec.task
            and _file_name(later.eval) == _file_name(spec)
            and later.eval.created >= stopped
            and _settings(later.eval) == _settings(spec)
        ):
            return later
    return None


def _file_name(spec: Any) -> str | None:
    """A log's task file as ``eval_retry`` finds it (from the working folder): two files of one
    name in two folders are two tasks."""
    return os.path.realpath(spec.task_file) if spec.task_file else None


def _settings(spec: Any) -> dict[str, Any]:
    """What a log ran with, as :func:`run_eval` is asked for it."""
    roles = {}
    for role, config in (spec.model_roles or {}).items():
        roles[role] = config.model if hasattr(config, "model") else [c.model for c in config]
    return {
        "task arguments": _plain(spec.task_args_passed),
        "model arguments": _plain(spec.model_args),
        "limit": _plain(spec.config.limit),
        "model roles": _plain(roles),
    }


def _plain(value: Any) -> Any:
    """``value`` as the log stores it (JSON: tuples become lists)."""
    return json.loads(json.dumps(value, default=str))


def _task_matcher(task: str, resolved: Any) -> Callable[[Any], bool]:
    """Whether a log's spec is of ``task`` (as :func:`run_eval` was given it, ``resolved`` by the
    registry): a task file's task by its file and name; a task function (built in or registered)
    by the name inspect registers it under (``trustlab/demo``), and another package's task by
    its full name, never by the short name alone: a task file's or another package's ``demo``
    is not trustlab's (``eval_retry`` would replay that task)."""
    file, _, name = task.partition("@")
    if file.endswith(".py"):

        def same_file(spec: Any) -> bool:
            # the file eval_retry would replay (the log's, from here), not one of the same name
            if _file_name(spec) != os.path.realpath(file):
                return False
            return not name or spec.task.split("/")[-1] == name

        return same_file
    registered = None
    if callable(resolved):
        from inspect_ai.util import registry_info

        try:
            registered = registry_info(resolved).name
        except ValueError:  # not an inspect @task function: inspect refuses it when it runs
            registered = None
    full = registered or (task if "/" in task else None)
    if full is not None:
        return lambda spec: spec.task_file is None and spec.task == full
    return lambda spec: spec.task_file is None and spec.task.split("/")[-1] == task

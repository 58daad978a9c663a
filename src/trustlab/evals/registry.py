"""The registry of trustlab's inspect tasks: names that ``trustlab eval run NAME`` resolves.

A task is an inspect ``@task`` function. trustlab's own tasks are listed in :data:`BUILTIN_TASKS`
as ``"module:function"`` (imported only when the task is used, so listing them imports neither
inspect nor the task's dependencies); :func:`register_task` adds one at run time.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trustlab._checks import check_string
from trustlab._results import Result
from trustlab.errors import InputError

__all__ = ["BUILTIN_TASKS", "TaskList", "register_task", "tasks", "resolve_task"]

#: name -> ("module:function", one-line description)
BUILTIN_TASKS: dict[str, tuple[str, str]] = {
    "demo": (
        "trustlab.evals.demo:demo",
        "20 questions about capital cities, scored by whether the answer includes the city",
    ),
    "casebench": (
        "trustlab.evals.casebench:casebench",
        "CASE-Bench context-aware safety judging (-T mode=binary|score|logits, -T ablate=..., "
        "-T data=CASEBench_data.json; default the shipped synthetic set)",
    ),
    "neutrality": (
        "trustlab.evals.neutrality:neutrality",
        "political neutrality: the technique each answer used vs the one its prompt calls for "
        "(--judge MODEL, else the offline baseline; -T data=FILE|DIR, -T per_task=N)",
    ),
    "neutrality_pairs": (
        "trustlab.evals.neutrality_pairs:neutrality_pairs",
        "Anthropic's paired even-handedness prompts: refusal, opposing-perspectives and "
        "even-handedness rates per pair (--judge MODEL; -T per_category=N)",
    ),
    "misuse": (
        "trustlab.evals.misuse:misuse",
        "misuse through model combinations on benign proxy tasks: strong + weak vs each alone "
        "(--strong S --weak W; -T decomposer=manual|auto, -T suite=code|text|all, -T n=N)",
    ),
}

#: task name -> the inspect model roles it needs (``run_eval`` refuses a run without them).
REQUIRED_ROLES: dict[str, tuple[str, ...]] = {"misuse": ("strong", "weak")}
#: built-in task name -> the inspect model roles it takes (``run_eval`` refuses any other role,
#: which the task would silently ignore); tasks not listed here (files, registered tasks) take any.
TASK_ROLES: dict[str, tuple[str, ...]] = {
    "demo": (),
    "casebench": (),
    "neutrality": ("grader",),
    "neutrality_pairs": ("grader",),
    "misuse": ("strong", "weak"),
}
#: How an error names a role's model.
ROLE_NOUNS = {"grader": "judge", "strong": "strong model", "weak": "weak model"}

_REGISTERED: dict[str, tuple[Callable[..., Any] | str, str]] = {}


@dataclass(frozen=True)
class TaskList(Result):
    """The registered tasks: ``names`` and one description each."""

    names: tuple[str, ...]
    descriptions: tuple[str, ...]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def summary(self) -> str:
        width = max((len(n) for n in self.names), default=4)
        lines = [f"{len(self.names)} trustlab task(s) (trustlab eval run NAME --model M)"]
        lines += [
            f"  {n:<{width}}  {d}" for n, d in zip(self.names, self.descriptions, strict=True)
        ]
        return "\n".join(lines)


def tasks() -> TaskList:
    """The trustlab tasks known by name (built in and registered).

    Examples
    --------
    >>> "demo" in tasks()
    True
    """
    table = {**BUILTIN_TASKS, **_REGISTERED}
    names = tuple(sorted(table))
    return TaskList(names, tuple(table[n][1] for n in names))


def register_task(name: str, task: Callable[..., Any] | str, description: str = "") -> None:
    """Make ``task`` (an inspect ``@task`` function, or ``"module:function"``) known as ``name``.

    Examples
    --------
    >>> register_task("my-demo", "trustlab.evals.demo:demo", "the demo under another name")
    >>> "my-demo" in tasks()
    True
    """
    check_string(name, "name")
    if "/" in name or "@" in name or name.endswith(".py"):
        raise InputError.bad("name", "a task name without '/', '@' or '.py'", name)
    if not (callable(task) or (isinstance(task, str) and _module_function(task))):
        raise InputError.bad("task", "an inspect @task function or 'module:function'", task)
    if not isinstance(description, str):
        raise InputError.bad("description", "a string", description)
    _REGISTERED[name] = (task, description)


def _module_function(text: str) -> bool:
    """Whether ``text`` reads 'module:function' (dotted names; ':fn' or '.rel:fn' stopped
    resolve_task on importlib's raw ValueError or TypeError)."""
    module, colon, function = text.partition(":")
    return (
        bool(colon)
        and function.isidentifier()
        and all(part.isidentifier() for part in module.split("."))
    )


def check_roles(task: str, roles: Any) -> None:
    """Refuse a model role the built-in ``task`` does not take (it would be ignored): an
    :class:`InputError` naming ``model_roles[role]``."""
    if task in _REGISTERED or task not in TASK_ROLES:
        return
    takes = TASK_ROLES[task]
    for role in roles:
        if role not in takes:
            noun = ROLE_NOUNS.get(role, f"model role '{role}'")
            argument = f"model_roles[{role!r}]"
            nouns = [ROLE_NOUNS.get(r, r) for r in takes]
            which = f"it takes a {' and a '.join(nouns)}" if nouns else "it takes none"
            raise InputError(
                f"{argument}: the {task} task takes no {noun} ({which})",
                argument=argument,
            )


def resolve_task(spec: str) -> Callable[..., Any] | str:
    """A registered name as its task function; anything else (a file, ``file.py@task``, an
    inspect registry name) unchanged, for inspect to resolve."""
    check_string(spec, "task")
    table = {**BUILTIN_TASKS, **_REGISTERED}
    if spec not in table:
        if "/" in spec or "@" in spec or spec.endswith(".py"):
            return spec
        raise InputError.bad(
            "task",
            "a trustlab task (" + ", ".join(sorted(table)) + "), a task file or file.py@task",
            spec,
        )
    task = table[spec][0]
    if callable(task):
        return task
    module, _, function = task.partition(":")
    try:
        found = getattr(importlib.import_module(module), function, None)
        missing = f"the module {module!r} has no {function!r}"
    except ModuleNotFoundError as exc:
        # the module itself (or a package above it) missing; a missing dependency of a module
        # that exists stays the ModuleNotFoundError it is
        if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
            raise
        found, missing = None, f"no module {module!r}"
    if found is not None and not callable(found):  # 'os:path' gave inspect a module
        found, missing = None, f"{module}.{function} is a {type(found).__name__}, not a function"
    if found is None:
        raise InputError(
            f"task: expected the task {spec!r} to name an importable function, got {task!r} "
            f"({missing}); register it again with 'module:function' or the @task function",
            argument="task",
        )
    return found


def load_builtin_tasks() -> None:
    """Import every built-in task module (registers their ``@task`` functions with inspect)."""
    for target, _ in BUILTIN_TASKS.values():
        importlib.import_module(target.partition(":")[0])


#: the key of a log's metadata that holds :func:`data_digests` (run_eval compares it on resume)
DATA_DIGESTS = "trustlab_data_sha256"


def _names_data(key: str) -> bool:
    """Whether a task argument's name says it holds data (``data``, ``eval_data``, ``path``,
    ``prompts_file`` ...): only those are read, so that a choice such as ``-T suite=code`` is
    never taken for a folder of the working directory that happens to share its name."""
    key = key.lower()
    return key == "data" or key.endswith(("_data", "path", "file", "dir", "folder"))


def data_digests(task_args: dict[str, Any]) -> dict[str, str]:
    """{argument: sha256 of the content} of the task arguments named for data (see
    :func:`_names_data`) that name a file or folder."""
    digests = {}
    for key, value in task_args.items():
        if not _names_data(str(key)):
            continue
        path = Path(value) if isinstance(value, (str, os.PathLike)) and value else None
        if path is None or not path.exists():
            continue
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        digest = hashlib.sha256()
        for file in files:
            digest.update(f"{file.relative_to(path) if file != path else ''}\0".encode())
            digest.update(hashlib.sha256(file.read_bytes()).digest())
        digests[key] = digest.hexdigest()
    return digests

"""``trustlab eval``: run inspect tasks on models and turn their logs into a report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, err_console, tell
from trustlab.cli._runs import OverwriteOption, options_named, refuse_existing
from trustlab.errors import InputError

app = typer.Typer(
    help="LLM evaluations on inspect_ai: run tasks (trustlab/<model> runs local models) and report "
    "their logs.",
    no_args_is_help=True,
)

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
#: What ``eval report`` writes into --out.
REPORT_FILES = ("report.html", "report.json")


@app.command("tasks")
def list_tasks(as_json: JsonOption = False) -> None:
    """List the trustlab tasks that 'trustlab eval run NAME' knows."""
    from trustlab.evals import tasks

    emit(tasks(), as_json)


@app.command("run")
def run(
    task: Annotated[
        str,
        typer.Argument(
            help="A trustlab task name (see 'trustlab eval tasks'), a task file or file.py@task."
        ),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="An inspect model, e.g. trustlab/smollm2-135m-instruct or "
            "openai-api/<service>/<model> (repeatable: one log per model). Tasks of two models "
            "(misuse) take --strong and --weak instead; then the default is the --weak model.",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="The log folder (inspect's --log-dir).")
    ] = Path("logs"),
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many samples.")] = None,
    task_arg: Annotated[
        list[str] | None,
        typer.Option(
            "-T", "--task-arg", help="A task argument key=value (repeatable, each key once)."
        ),
    ] = None,
    model_arg: Annotated[
        list[str] | None,
        typer.Option(
            "-M", "--model-arg", help="A model argument key=value (repeatable, each key once)."
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="The judge model of tasks that have one (inspect's model role 'grader'), e.g. "
            "openai-api/<service>/<model>; without it such tasks use their offline judge.",
        ),
    ] = None,
    strong: Annotated[
        str | None,
        typer.Option(
            "--strong", help="The strong, aligned model of the misuse task (role 'strong')."
        ),
    ] = None,
    weak: Annotated[
        str | None,
        typer.Option("--weak", help="The weak, unaligned model of the misuse task (role 'weak')."),
    ] = None,
    decomposer: Annotated[
        str | None,
        typer.Option(
            "--decomposer", help="The misuse task's decomposition: manual or auto (-T decomposer)."
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Start afresh even when --out holds an unfinished run."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Run TASK on each --model with inspect; an unfinished run in --out is resumed.

    An eval that ends in error exits 1 with one line naming its log and error.
    """
    from trustlab.evals import run_eval
    from trustlab.evals.run import role_argument

    roles = {"grader": judge, "strong": strong, "weak": weak}
    roles = {role: name for role, name in roles.items() if name}
    task_args = _pairs(task_arg, "-T")
    model_args = _pairs(model_arg, "-M")
    # an error about a task or model argument names the -T / -M the user typed (or --decomposer)
    options = {key: f"-M {key}" for key in model_args if key not in _RUN_ARGUMENTS}
    options |= {key: f"-T {key}" for key in task_args if key not in _RUN_ARGUMENTS}
    if decomposer is not None:
        given = task_args.get("decomposer", decomposer)
        if given != decomposer:
            raise InputError(
                f"--decomposer: {decomposer} conflicts with -T decomposer={given}; give one of "
                "them (or the same value in both)",
                argument="--decomposer",
            )
        task_args["decomposer"] = decomposer
        options["decomposer"] = "--decomposer"
    if not model:
        if weak is None:
            raise InputError.bad("--model", "an inspect model (or --strong and --weak)", "none")
        model = [weak]
    options |= {role_argument(role): option for role, option in _ROLE_OPTIONS.items()}
    with options_named({"task_args": "-T", "model_args": "-M", "log_dir": "--out", **options}):
        result = run_eval(
            task,
            model,
            log_dir=out,
            limit=limit,
            task_args=task_args,
            model_args=model_args,
            model_roles=roles or None,
            resume=not fresh,
            on_resume=lambda message: tell(message, as_json=True),  # on stderr
        )
    emit(result, as_json)


#: run_eval's own arguments: an error naming one of them is not about a -T of the same name.
_RUN_ARGUMENTS = ("task", "model", "log_dir", "limit", "task_args", "model_args", "model_roles")
#: The options that bind inspect's model roles.
_ROLE_OPTIONS = {"grader": "--judge", "strong": "--strong", "weak": "--weak"}


@app.command("report")
def report(
    log_dir: Annotated[Path, typer.Argument(help="A folder of inspect logs.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Where report.html and report.json go (default: LOG_DIR)."),
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Read the logs in LOG_DIR into report.html and report.json (errored logs marked as such).

    A report.html or report.json already in --out (LOG_DIR by default) is refused unless
    --overwrite.
    """
    from trustlab.audit.sections.evals import write_page
    from trustlab.evals import read_logs

    with options_named({"log_dir": "LOG_DIR"}):  # the argument, as the usage line names it
        logs = read_logs(log_dir)
    refuse_existing(out or log_dir, overwrite, REPORT_FILES, "a report")
    html, data = write_page(logs, out or log_dir)
    for log in logs.logs:
        if log["errored_samples"]:  # a task that tolerates errors (fail_on_error) finished
            err_console.print(
                f"warning: {log['path']}: {log['errored_samples']} of {log['samples']} samples "
                "errored; its metrics leave them out",
                highlight=False,
                markup=False,
            )
        if log["status"] != "success":
            err_console.print(
                f"warning: {log['path']}: {log['status']}"
                + (f": {log['error']}" if log["error"] else " (unfinished)")
                + (f"; since finished by {log['finished_by']}" if log["finished_by"] else ""),
                highlight=False,
                markup=False,
            )
    tell(f"wrote {html.name}, {data.name} to {html.parent}", as_json)
    emit(logs, as_json)


def _pairs(items: list[str] | None, option: str) -> dict[str, object]:
    """``key=value`` options as a dict; values are read as JSON when they parse, else text."""
    pairs: dict[str, object] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError.bad(option, "key=value", item)
        if key in pairs:  # the last would win silently (-T ablate=a -T ablate=b runs b only)
            raise InputError(
                f"{option} {key}: expected each key once, got it more than once (only the last "
                "value would be used)",
                argument=option,
            )
        try:
            pairs[key] = json.loads(value)
        except json.JSONDecodeError:
            pairs[key] = value
    return pairs

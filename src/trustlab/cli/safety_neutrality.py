"""``trustlab safety neutrality``: the political-neutrality prompt set (Fisher et al., 2025).

* ``build-prompts --data DIR --out FILE [--seed 10]``: builds the 10,314-prompt set from the
  authors' raw CSVs in DIR (their repository's ``Data/`` folder), saves it as FILE (.csv or
  .jsonl, by the suffix) and prints the prompts per task type. An existing FILE is refused unless
  ``--overwrite``.
* ``prompts [--per-task N] [--seed S] [--out FILE]``: trustlab's own small set (36 prompts, 4 per
  task type), or a seeded sample of at most N per task type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, tell
from trustlab.cli._runs import options_named, refuse_existing_file
from trustlab.errors import InputError

__all__ = ["app", "build_prompts", "prompts"]

app = typer.Typer(
    no_args_is_help=True,
    help="Political neutrality: the technique-labelled prompt set of Fisher et al. (2025).",
)

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
OverwriteFileOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing --out file (refused without it).")
]
SUFFIXES = (".csv", ".jsonl")


def _check_out(out: Path | None, overwrite: bool) -> None:
    """A prompt file name (.csv or .jsonl) that is not already there (unless --overwrite)."""
    if out is None:
        return
    if out.suffix.lower() not in SUFFIXES:
        raise InputError.bad("--out", "a file name ending in .csv or .jsonl", str(out))
    if out.is_dir():  # even with --overwrite: a folder is not replaced by a file
        raise InputError.bad("--out", "a file name, not a folder", str(out))
    refuse_existing_file(out, overwrite)


@app.command("build-prompts")
def build_prompts(
    data: Annotated[
        Path, typer.Option("--data", help="The folder of the authors' raw CSVs (their Data/).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the prompts here (.csv or .jsonl).")],
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the closings and party prefixes.")
    ] = 10,
    overwrite: OverwriteFileOption = False,
    as_json: JsonOption = False,
) -> None:
    """Build the 10,314-prompt set from the authors' raw CSVs and save it to --out."""
    from trustlab.safety.neutrality import build_prompts as build

    _check_out(out, overwrite)
    with options_named({"data_dir": "--data", "random_state": "--seed", "path": "--out"}):
        result = build(data, random_state=seed)
        result.save(out)
    emit(result, as_json)
    tell(f"wrote {len(result):,} prompts to {out}", as_json)


@app.command("prompts")
def prompts(
    per_task: Annotated[
        int | None,
        typer.Option("--per-task", help="At most this many prompts per task type (a sample)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the prompts here (.csv or .jsonl).")
    ] = None,
    overwrite: OverwriteFileOption = False,
    as_json: JsonOption = False,
) -> None:
    """trustlab's own prompt set (MIT; 4 per task type), or a sample of it."""
    from trustlab._checks import check_random_state
    from trustlab.safety.neutrality import own_prompts

    check_random_state(seed, "--seed")  # a bad seed is refused even where no sample is drawn
    _check_out(out, overwrite)
    result = own_prompts()
    with options_named({"per_task": "--per-task", "random_state": "--seed", "path": "--out"}):
        if per_task is not None:
            result = result.subset(per_task, random_state=seed)
        if out is not None:
            result.save(out)
    emit(result, as_json)
    if out is not None:
        tell(f"wrote {len(result):,} prompts to {out}", as_json)

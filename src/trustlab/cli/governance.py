"""``trustlab governance``: the participation assessment (Right to AI).

``questionnaire [--out FILE]`` writes the blank answers file (every item, its question and its
options as comments); ``example --out DIR`` copies the fictitious worked example (three assessors
of trustlab's demo audit); ``assess ANSWERS.yaml [MORE.yaml ...] --out DIR`` scores one or several
assessors' files and writes ``participation.html``, ``participation.md``, ``card.json`` and
``result.json`` (files already there are replaced only with ``--overwrite``); ``validate FILE`` checks a questionnaire, answers, tiers or card file.

A structured self- or external-assessment aid; it does not measure democratic legitimacy.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from trustlab._results import output_dir, write_atomic
from trustlab.cli._common import JSON_OPTION_HELP, emit, tell
from trustlab.cli._runs import OverwriteOption, refuse_existing
from trustlab.errors import InputError

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="Participation assessment (Right to AI): questionnaire, assess, validate.",
)

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
TiersOption = Annotated[
    Path | None,
    typer.Option(
        "--tiers",
        help="A rung->tier table (YAML) replacing the shipped one, whose tier names and "
        "boundaries are unverified placeholders.",
    ),
]
QuestionnaireOption = Annotated[
    Path | None,
    typer.Option("--questionnaire", help="A questionnaire YAML replacing the shipped one."),
]


@app.callback()
def _group() -> None:
    """Participation assessment (Right to AI): questionnaire, assess, validate."""


@app.command("questionnaire")
def questionnaire(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the blank answers YAML here (default: print it)."),
    ] = None,
    source: QuestionnaireOption = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing --out file.")
    ] = False,
) -> None:
    """Write the blank answers file to fill in (YAML, questions and options as comments)."""
    from trustlab.governance import blank_answers, load_questionnaire

    if out is not None and out.is_dir():
        raise InputError.bad("--out", "a file path for the answers YAML, not a folder", str(out))
    if out is not None and out.exists() and not overwrite:  # perhaps filled in: nothing lost
        raise InputError(
            f"--out: {out} already exists; pass --overwrite to replace it with a blank file, or "
            "choose another --out",
            argument="--out",
        )
    text = blank_answers(load_questionnaire(source))
    if out is None:
        sys.stdout.write(text)
        return
    if out.parent != Path(""):
        output_dir(out.parent, "--out")
    write_atomic(out, text)
    tell(f"wrote {out}")


@app.command("example")
def example(
    out: Annotated[Path, typer.Option("--out", help="Folder for the three example files.")],
    overwrite: OverwriteOption = False,
) -> None:
    """Copy the fictitious worked example (three assessors of trustlab's demo audit)."""
    from trustlab.governance import EXAMPLE_ANSWERS, data_path

    refuse_existing(out, overwrite, EXAMPLE_ANSWERS, "example answers (perhaps edited)")
    folder = output_dir(out, "--out")
    for name in EXAMPLE_ANSWERS:
        shutil.copyfile(data_path(name), folder / name)
    tell(f"wrote {', '.join(EXAMPLE_ANSWERS)} to {folder}")


@app.command("assess")
def assess(
    answers: Annotated[
        list[Path], typer.Argument(help="One answers YAML per assessor, all about one system.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write participation.html/.md, card.json and result.json."),
    ] = None,
    tiers: TiersOption = None,
    source: QuestionnaireOption = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Score the answers: tier per dimension, missing evidence, agreement between assessors."""
    from trustlab.audit.sections.participation import (
        CARD_NAME,
        HTML_NAME,
        MARKDOWN_NAME,
        write_page,
    )
    from trustlab.governance import assess as run_assess
    from trustlab.governance import load_questionnaire, load_tiers

    # result.json may be another command's (a DCP result): never replaced unasked
    names = (HTML_NAME, MARKDOWN_NAME, CARD_NAME, "result.json")
    refuse_existing(out, overwrite, names, "an earlier assessment or result")
    q = load_questionnaire(source)
    t = load_tiers(tiers)
    with _argument_named("answers", "ANSWERS"):
        result = run_assess([Path(a) for a in answers], questionnaire=q, tiers=t)
    emit(result, as_json)
    if out is not None:
        written = write_page(result, out)
        tell(f"wrote {', '.join(p.name for p in written)} to {out}", as_json)


@app.command("validate")
def validate(
    path: Annotated[Path, typer.Argument(help="A questionnaire, answers, tiers or card file.")],
    source: QuestionnaireOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a file against its JSON Schema and the questionnaire's rules."""
    from trustlab.governance import load_questionnaire, validate_file

    questionnaire = load_questionnaire(source)
    # the loaders name the file by its kind ("questionnaire (q.yaml): ..."); here it is PATH,
    # not the --questionnaire option (loaded above) that a bad PATH was blamed on
    with _argument_named("path|questionnaire|tiers|answers", "PATH"):
        kind = validate_file(path, questionnaire)
    if as_json:
        sys.stdout.write(json.dumps({"path": str(path), "kind": kind, "valid": True}) + "\n")
    else:
        tell(f"{path}: a valid {kind} file")


@contextmanager
def _argument_named(python: str, cli: str) -> Iterator[None]:
    """Meanwhile, an InputError about the library argument ``python`` (``answers[1] (a.yaml):
    ...``; several names as ``a|b``) names the command's argument ``cli`` instead
    (``ANSWERS (a.yaml): ...``)."""
    try:
        yield
    except InputError as exc:
        argument, message = exc.argument or "", str(exc)
        if not re.fullmatch(rf"(?:{python})(\[\d+\])?", argument) or not message.startswith(
            argument
        ):
            raise
        raise InputError(cli + message[len(argument) :], argument=cli) from exc

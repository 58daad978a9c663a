"""Helpers of the run-like commands: reruns into an ``--out`` that holds results, option names
for library arguments, and amounts in the plans they announce.

A command that resumes (``robustness certify``, ``federated simulate``) reads its own checkpoint;
every other command that writes ``--out`` refuses a folder that already holds its results unless
``--overwrite`` is given (:func:`refuse_existing`), so a rerun never leaves an old result looking
like a new one. :func:`remove_stale` drops files of an earlier run that this run does not write.

:func:`options_named` names options for library arguments that the shared table
(``OPTION_FOR_ARGUMENT`` in ``_common``) maps to another command's option, or not at all.
:func:`amount` and :func:`counted` write the numbers of a plan ("540 points x 10^12 samples").
:func:`refuse_repeats`, :func:`unique_key` and :func:`folder_labels` name the models a command
compares (each once, one row label each).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab._checks import repeated
from trustlab._results import check_output_dir
from trustlab.errors import InputError

__all__ = [
    "OverwriteOption",
    "amount",
    "counted",
    "options_named",
    "refuse_existing",
    "remove_stale",
]

OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace the results already in --out (without it, a rerun into the same --out is "
        "refused). Only the files this command writes are replaced or removed; others there "
        "are kept.",
    ),
]


def refuse_existing(
    out: Path | None,
    overwrite: bool,
    names: Iterable[str] = ("result.json",),
    what: str = "results",
) -> None:
    """Refuse an ``--out`` that already holds one of ``names`` unless ``overwrite``, and one that
    is a file (or lies under one) before any work. The refusal says ``what`` is there, except of a
    lone ``result.json`` (when ``names`` holds more) beside other files, another command's (e.g.
    ``dcp.png``): it names those."""
    if out is not None:
        check_output_dir(out, "--out")
    if out is None or overwrite:
        return
    found = [name for name in names if (Path(out) / name).exists()]
    if not found:
        return
    it = "it" if what.startswith(("a ", "an ")) else "them"  # a trained network / results
    held = f"{what} ({', '.join(found)})"
    # every command writes a result.json: where this one writes more, a lone one may be another
    # command's (where it writes only result.json, its own figures lie beside it: 'results')
    if found == ["result.json"] and len(names) > 1:
        beside = sorted(path.name for path in Path(out).iterdir() if path.name not in names)
        if beside:
            shown = ", ".join(beside[:4]) + (f" and {len(beside) - 4} more" if beside[4:] else "")
            held, it = f"an earlier run's result.json (beside {shown})", "it"
    raise InputError(
        f"--out: {out} already holds {held}; pass --overwrite to replace {it}, or choose "
        "another --out",
        argument="--out",
    )


def refuse_existing_file(out: Path | None, overwrite: bool) -> None:
    """Refuse an ``--out`` file that already exists unless ``overwrite`` (a command writing one
    file; :func:`refuse_existing` is for a folder of results)."""
    if out is not None and Path(out).exists() and not overwrite:
        raise InputError(
            f"--out: {out} already exists; pass --overwrite to replace it, or choose another --out",
            argument="--out",
        )


def remove_stale(out: Path | None, names: Iterable[str]) -> None:
    """Delete the files ``names`` in ``out`` (an earlier run's, which this run does not write)."""
    if out is None:
        return
    for name in names:
        (Path(out) / name).unlink(missing_ok=True)


@contextmanager
def options_named(
    options: Mapping[str, str], hints: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Meanwhile, an :class:`InputError` about a library argument in ``options`` names the option
    instead (``budgets: ...`` -> ``--budgets: ...``); ``hints`` adds a sentence to the errors of
    an argument (e.g. how to start afresh)."""
    try:
        yield
    except InputError as exc:
        argument, message = exc.argument, str(exc)
        if argument is None or not message.startswith(f"{argument}:"):
            raise
        option = options.get(argument, argument)
        extra = (hints or {}).get(argument)
        if option == argument and extra is None:
            raise
        text = option + message[len(argument) :] + (f"; {extra}" if extra else "")
        raise InputError(text, argument=option) from exc


def amount(value: float) -> str:
    """A count for people: ``"10,100"``, and from ten million on ``"10^12"`` or
    ``"2.5 x 10^9"``."""
    if value < 1e7:
        return f"{int(round(value)):,}"
    exponent = len(str(int(value))) - 1
    mantissa = float(f"{value / 10**exponent:.3g}")  # as it is written: 9.9996 is 10
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    if mantissa == 1:
        return f"10^{exponent}"
    return f"{mantissa:.3g} x 10^{exponent}"


def counted(value: float, noun: str) -> str:
    """``"1 point"``, ``"540 points"``, ``"10^12 samples"``."""
    return f"{amount(value)} {noun}{'' if value == 1 else 's'}"


def folder_labels(paths: list[Path]) -> list[str]:
    """Row labels of model folders: each folder's name, or where two share it (``train`` writes
    every model to ``OUT/model``: ``A/model`` and ``B/model``) the run folder's (``A``, ``B``)."""
    names = [p.name or p.resolve().name or str(p) for p in paths]
    return [
        (p.resolve().parent.name or name) if names.count(name) > 1 else name
        for p, name in zip(paths, names, strict=True)
    ]


def refuse_repeats(option: str, given: list[Any], expected: str) -> None:
    """Refuse a model named twice: it was evaluated twice (as X and X_2, other random controls)."""
    twice = repeated([str(g) for g in given])
    if twice:
        raise InputError.bad(option, expected, f"{', '.join(twice)} repeated")


def unique_key(name: str, taken: dict[str, Any]) -> str:
    """``name``, or ``name_2``, ``name_3`` ... when ``taken`` holds it."""
    out, i = name, 2
    while out in taken:
        out, i = f"{name}_{i}", i + 1
    return out

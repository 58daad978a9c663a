"""Helpers shared by the CLI command modules: output, progress and file reading."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from trustlab._checks import npy_reason  # noqa: F401  (re-exported: the CLI readers)
from trustlab._results import json_text, write_outputs
from trustlab.cli._console import console, err_console, tell  # noqa: F401  (re-exported)
from trustlab.cli._progress import YesOption, announce, planned, progress, tracker  # noqa: F401  (re-exported)
from trustlab.data.tables import (  # noqa: F401  (re-exported)
    read_numeric_table,
    read_table,
    require_columns,
)
from trustlab.errors import InputError

JSON_OPTION_HELP = "Print the result as JSON (the result's to_dict()) instead of a summary."

# Where a command's torch model runs.
DeviceOption = Annotated[
    str,
    typer.Option(
        "--device",
        help="Where the model runs: cpu, cuda, cuda:N or auto (a GPU when torch sees one).",
    ),
]


def resolve_device_option(device: str, extra: str) -> str:
    """``--device`` checked and resolved before any work (errors name ``--device``)."""
    from trustlab._checks import check_device, resolve_device
    from trustlab._lazy import require

    check_device(device, "--device")
    return resolve_device(require("torch", extra), device, "--device")


# The model-file trust options, the same wherever a command reads a --model file.
TrustPickleOption = Annotated[
    bool,
    typer.Option(
        "--trust-pickle",
        help="Allow a pickle/joblib --model. Loading a pickle runs any code it contains: "
        "only for files you made yourself or fully trust.",
    ),
]
TrustTypeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--trust-type",
        help="Trust this extra type in a .skops model (repeatable), e.g. mypackage.MyModel.",
    ),
]


def check_seed_option(ctx: Any, param: Any, value: int | None) -> int | None:
    """The click callback of every command's ``--seed`` (main sets it on each): a seed below 0 or
    of 2**64 and above is refused as the options are read, before any work and the same way in
    every command (each checked it in its own words and range, some only after reading files)."""
    if value is not None and not 0 <= value < 2**64:
        expected = "a non-negative integer seed" if value < 0 else "an integer seed below 2**64"
        raise InputError.bad("--seed", expected, value)
    return value


EncodingOption = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="Text encoding of CSV/TSV input (default utf-8), e.g. latin-1 or cp1252.",
    ),
]


# The library names its arguments; the CLI names its options. Where an option is not simply the
# argument in kebab case (max_epochs -> --max-epochs), this is the one place that says which it is.
OPTION_FOR_ARGUMENT = {
    "random_state": "--seed",
    "X": "--data",
    "out_dir": "--out",
    "y_true": "--label",
    "y_pred": "--pred",
    "groups": "--group",
    "y": "--label",
    "budgets": "--budget-col",
    "w": "--weights",
    "b0": "--intercept",
    "checkpoint": "--out",
    "layers": "--layer",
    "threshold_factor": "--threshold",
    "codebook_sharing": "--codebooks",
    "codeword_gradient": "--codewords",
    "base_url": "--endpoint",
    "name_or_path": "--model",
    "outputs": "--predictions",
    "C": "--c",
    "model_name": "--name",
    "sections": "--section",
    "models": "--zoo",
    "n_tokens": "--tokens",
}


def option_message(message: str, argument: str | None, options: set[str]) -> str:
    """An error message that names the CLI option instead of the library argument.

    ``options`` are the invoked command's option names; a message about an argument that is not
    one of them is returned as it is.
    """
    if not argument or argument.startswith("-"):
        return message
    if not (message.startswith(f"{argument}:") or message.startswith(f"{argument} (")):
        return message  # "argument: ..." or "argument (file name): ..."
    option = OPTION_FOR_ARGUMENT.get(argument, "--" + argument.replace("_", "-"))
    if option not in options:
        return message
    text = option + message[len(argument) :]
    for python, cli in _PYTHON_ONLY.items():  # what a command line cannot pass
        text = text.replace(python, cli)
    return text


#: Alternatives of the library's messages that exist in Python only, as the CLI says them.
_PYTHON_ONLY = {
    "expected None, an integer >= 0 or a numpy Generator": "expected an integer >= 0",
    "expected None, an int seed or a numpy Generator": "expected an integer seed >= 0",
    "--chat: expected False for": "--chat: expected --no-chat for",
    "expected a non-empty string or None": "expected a non-empty value",
    "participation with answers files": "participation with --participation",
}


def emit(result: Any, as_json: bool) -> None:
    """Print a result: its ``to_dict()`` as JSON, or its ``summary()`` as text."""
    if as_json:
        sys.stdout.write(json_text(result.to_dict()))
    else:
        console.print(result.summary(), highlight=False, markup=False, emoji=False, soft_wrap=True)


def save(result: Any, out: Path | None, as_json: bool = False) -> list[Path]:
    """Write a result into ``--out`` (one writer for every command) and say where."""
    if out is None:
        return []
    written = write_outputs(result, out)
    names = ", ".join(p.name for p in written)
    tell(f"wrote {names} to {out}", as_json)
    return written


@contextmanager
def native_stdout_to_stderr() -> Iterator[None]:
    """Meanwhile, send what native code writes to file descriptor 1 to stderr instead.

    Some compiled solvers print banners straight to file descriptor 1, below Python's sys.stdout;
    stdout must hold only the result (``--json`` output is piped into other tools).
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no usable descriptors (an embedded interpreter): nothing to protect
        yield
        return
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def text_lines(path: Path, option: str) -> list[str]:
    """The non-empty lines of a UTF-8 text file (a byte-order mark, as Excel and Notepad write,
    is dropped)."""
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8-sig").splitlines()]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.bad(
            option, "a readable UTF-8 text file, one item per line", str(path)
        ) from exc
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InputError.bad(option, "a file with at least one non-empty line", str(path))
    return lines


def renamed_option(value: Any, old_value: Any, new: str, old: str) -> Any:
    """The value of the option ``new`` (a flag such as ``--n-classes``), or of ``old``, its
    hidden deprecated name kept for one release (a FutureWarning); both given is refused."""
    if old_value is None:
        return value
    parameter = new.lstrip("-").replace("-", "_")
    source = click.get_current_context().get_parameter_source(parameter)
    if source is not click.core.ParameterSource.DEFAULT:
        raise InputError(f"{old}: expected {new} only ({old} is its deprecated name), got both",
                         argument=old)  # fmt: skip
    warnings.warn(f"{old} is deprecated; use {new}", FutureWarning, stacklevel=2)
    return old_value

"""Helpers shared by the CLI command modules: output, progress and file reading."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from trustlab.data.tables import read_table, require_columns  # noqa: F401  (re-exported)

console = Console(soft_wrap=True)  # never break a path or a number across lines
err_console = Console(stderr=True, soft_wrap=True)

JSON_OPTION_HELP = "Print the result as JSON (the result's to_dict()) instead of a summary."

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


def emit(result: Any, as_json: bool) -> None:
    """Print a result: its ``to_dict()`` as JSON, or its ``summary()`` as text."""
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, default=_json_default) + "\n")
    else:
        console.print(result.summary(), highlight=False, markup=False, emoji=False, soft_wrap=True)


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


@contextmanager
def progress(enabled: bool = True) -> Iterator[Progress]:
    """A Rich progress display on stderr (silent when ``enabled`` is False or not a terminal)."""
    prog = Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=not enabled,
        transient=True,
    )
    with prog:
        yield prog


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

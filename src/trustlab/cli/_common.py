"""Helpers shared by the CLI command modules: output, progress and file reading."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from trustlab.errors import InputError

console = Console()
err_console = Console(stderr=True)

JSON_OPTION_HELP = "Print the result as JSON (the result's to_dict()) instead of a summary."


def emit(result: Any, as_json: bool) -> None:
    """Print a result: its ``to_dict()`` as JSON, or its ``summary()`` as text."""
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, default=_json_default) + "\n")
    else:
        console.print(result.summary(), highlight=False, markup=False)


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


def read_table(path: Path, name: str = "--data"):
    """Read a CSV or Parquet file into a DataFrame, with a clear error for anything else."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing CSV or Parquet file", str(path))
    suffix = "".join(path.suffixes[-2:]).lower()
    try:
        if suffix.endswith((".parquet", ".pq")):
            return pd.read_parquet(path)
        if suffix.endswith((".csv", ".csv.gz", ".txt", ".tsv")):
            sep = "\t" if ".tsv" in suffix else ","
            return pd.read_csv(path, sep=sep)
    except Exception as exc:  # parser errors become one clear line
        raise InputError(f"{name}: could not read {path}: {exc}", argument=name) from exc
    raise InputError.bad(name, "a .csv, .tsv or .parquet file", str(path))


def require_columns(df, columns: dict[str, str | None]) -> None:
    """Check that each named option's column exists in ``df``."""
    for option, col in columns.items():
        if col is not None and col not in df.columns:
            raise InputError(
                f"{option}: expected a column of the data, got {col!r} "
                f"(columns: {', '.join(map(str, df.columns[:20]))})",
                argument=option,
            )

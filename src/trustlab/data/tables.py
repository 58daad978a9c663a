"""Reading user tables (CSV, TSV, Parquet) with clear errors; shared by the library and the CLI."""

from __future__ import annotations

from pathlib import Path

from trustlab.errors import InputError

__all__ = ["read_table", "require_columns"]


def read_table(path: Path, name: str = "--data", *, encoding: str | None = None):
    """Read a CSV or Parquet file into a DataFrame, with a clear error for anything else.

    ``encoding`` is the text encoding of a CSV/TSV file (default UTF-8; e.g. ``latin-1`` or
    ``cp1252`` for files saved by older spreadsheet programs); a file that does not decode says
    so and names the ``--encoding`` option.
    """
    import codecs

    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing CSV or Parquet file", str(path))
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise InputError.bad(
                "--encoding", "a text encoding such as utf-8 or latin-1", encoding
            ) from None
    suffix = "".join(path.suffixes[-2:]).lower()
    try:
        if suffix.endswith((".parquet", ".pq")):
            return pd.read_parquet(path)
        if suffix.endswith((".csv", ".csv.gz", ".txt", ".tsv")):
            sep = "\t" if ".tsv" in suffix else ","
            return pd.read_csv(path, sep=sep, encoding=encoding)
    except UnicodeDecodeError as exc:
        used = encoding or "utf-8"
        raise InputError(
            f"{name}: could not read {path} as {used} text ({exc.reason} at byte {exc.start}); "
            "name its encoding with --encoding, e.g. --encoding latin-1",
            argument=name,
        ) from None
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

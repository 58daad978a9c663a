"""Reading user tables (CSV, TSV, Parquet) with clear errors; shared by the library and the CLI."""

from __future__ import annotations

from pathlib import Path

from trustlab.errors import InputError

__all__ = ["read_table", "require_columns"]


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

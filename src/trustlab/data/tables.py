"""Reading user tables (CSV, TSV, Parquet) with clear errors; shared by the library and the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trustlab._checks import repeated
from trustlab.errors import InputError

__all__ = ["read_numeric_table", "read_table", "require_columns"]


def read_table(
    path: Path,
    name: str = "--data",
    *,
    encoding: str | None = None,
    header: int | None = 0,
    dtype: Any = None,
    keep_default_na: bool = True,
    exact_columns: Sequence[str] = (),
    sep: str | None = None,
):
    """Read a CSV or Parquet file into a DataFrame, with a clear error for anything else.

    ``encoding`` is the text encoding of a CSV/TSV file (default UTF-8; e.g. ``latin-1`` or
    ``cp1252`` for files saved by older spreadsheet programs); a file that does not decode says
    so and names the ``--encoding`` option. ``header`` and ``dtype`` are pandas' ``read_csv``
    options (``header=None``: no row is taken as column names), and so is ``keep_default_na``
    (False: a cell ``nan`` or ``NA`` stays that text, an empty cell an empty string).

    In a CSV, the ``exact_columns`` (those present) that hold text are read so that only an empty
    cell is missing: a class or group named ``NA``, ``None``, ``null`` or ``N/A`` stays that
    text. A column whose other values are all numbers keeps ``NA`` as missing (as R writes a
    missing number), and so do the other columns. An exact column of numbers is read as the text
    it holds when reading it as numbers would merge its values: two texts name one number
    (groups ``1`` and ``1.0``, or ``01`` and ``1``). Codes ``01``, ``02`` alone stay the numbers
    1, 2 (a prediction column written 1, 2 beside them still matches). A Parquet file records
    its own nulls.
    """
    import codecs

    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing CSV or Parquet file", str(path))
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):  # TypeError: not a string (encoding=5)
            raise InputError.bad(
                "--encoding", "a text encoding such as utf-8 or latin-1", encoding
            ) from None
    suffix = path.name.lower()
    try:
        if suffix.endswith((".parquet", ".pq")):
            return pd.read_parquet(path)
        if suffix.removesuffix(".gz").endswith((".csv", ".txt", ".tsv")):
            if sep is None:
                sep = "\t" if suffix.removesuffix(".gz").endswith(".tsv") else ","
            options = dict(sep=sep, encoding=encoding, header=header, dtype=dtype)
            frame = _read_csv_rows(path, name, keep_default_na, options)
            if header is not None:
                _refuse_repeated_names(path, name, options)
            # a text column's "NA" is a value (a group "NA", North America); a numeric
            # column's "NA" stays missing (as R writes a missing number)
            exact = [
                c
                for c in dict.fromkeys(exact_columns)
                if c in frame.columns and not pd.api.types.is_numeric_dtype(frame[c])
            ]
            if exact:
                again = pd.read_csv(
                    path, usecols=exact, keep_default_na=False, na_values=[""], **options
                )
                for column in exact:
                    frame[column] = again[column]
            numeric = [
                c
                for c in dict.fromkeys(exact_columns)
                if c in frame.columns and frame[c].dtype.kind in "iuf"
            ]
            if numeric:
                texts = pd.read_csv(
                    path, usecols=numeric, dtype=str, keep_default_na=False, na_values=[""],
                    sep=sep, encoding=encoding, header=header,
                    index_col=options.get("index_col"),
                )  # fmt: skip
                for column in numeric:
                    if _names_not_numbers(texts[column], frame[column]):
                        # a cell read as missing (NA, nan) stays missing
                        frame[column] = texts[column].where(frame[column].notna())
            return frame
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        used = encoding or "utf-8"
        where = _undecodable(path, used)  # pandas' exc.start counts from its read buffer
        raise InputError(
            f"{name}: could not read {path} as {used} text ({exc.reason}{where}); "
            f"name its encoding with --encoding, e.g. {_encoding_hint(path)}",
            argument=name,
        ) from None
    except Exception as exc:  # parser errors become one clear line
        reason = " ".join(str(exc).split("\n")).strip()  # pandas ends some with a line break
        raise InputError(f"{name}: could not read {path}: {reason}", argument=name) from exc
    raise InputError.bad(name, "a .csv, .tsv (optionally .gz) or .parquet file", str(path))


def _read_csv_rows(path: Path, name: str, keep_default_na: bool, options: dict):
    """``pd.read_csv``, except that a separator ending every data row (``1,x,`` under ``a,b``,
    as some exporters write) is no extra column: pandas took the first column for the index
    then, shifting every value one column left (a's values read as b's). Rows wider than the
    header by cells that are not empty (R's ``write.table`` row names) keep pandas' reading.
    Sets ``options["index_col"]`` for the re-reads."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        frame = pd.read_csv(path, keep_default_na=keep_default_na, index_col=False, **options)
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        frame = pd.read_csv(path, keep_default_na=keep_default_na, **options)
        # rows ending in two or more empty cells: pandas took the first cells for a row index
        # and shifted every value left; two or more cells of row names (a MultiIndex written
        # with to_csv(index_label=False)) leave the last columns holding values
        if isinstance(frame.index, pd.MultiIndex) and _all_empty(frame, frame.index.nlevels):
            width = len(frame.columns)
            raise InputError(
                f"{name}: expected rows of {width} cells in {path.name}, as its header names (one "
                f"more for row names), got rows of {width + frame.index.nlevels} cells",
                argument=name,
            )
    else:
        options["index_col"] = False
    return frame


def _all_empty(frame, count: int) -> bool:
    """Whether the last ``count`` columns of ``frame`` hold only missing or empty cells."""
    tail = frame.iloc[:, -count:]
    return bool((tail.isna() | tail.astype(object).eq("")).all(axis=None))


def _refuse_repeated_names(path: Path, name: str, options: dict) -> None:
    """Refuse a header naming a column twice: pandas reads the second ``a`` as ``a.1``, so an
    option naming ``a`` would silently use the first only."""
    import pandas as pd

    rows = options["header"] + 1
    settings = {**options, "header": None, "dtype": str}
    raw = pd.read_csv(path, **settings, nrows=rows, keep_default_na=False)
    names = [n for n in raw.iloc[rows - 1].tolist() if n != ""] if len(raw) >= rows else []
    twice = repeated(names)
    if twice:
        raise InputError(
            f"{name}: expected distinct column names in {path}, got "
            f"{', '.join(repr(n) for n in twice)} more than once",
            argument=name,
        )


def _names_not_numbers(texts, numbers) -> bool:
    """Whether a column's ``texts`` (as written) would be merged when read as the ``numbers``:
    two texts name one number (``1`` and ``1.0``, ``01`` and ``1``)."""
    present = numbers.notna() & texts.notna()
    return texts[present].str.strip().nunique() > numbers[present].nunique()


def _encoding_hint(path: Path) -> str:
    """``--encoding utf-16`` for a file that starts with a UTF-16 byte order mark (a
    spreadsheet's "Unicode text"; latin-1, suggested before, read it as 'ÿþy\x00,\x00...'),
    else ``--encoding latin-1``. UTF-32 (little-endian: FF FE 00 00, which starts like UTF-16's
    mark) is told ``--encoding utf-32``: utf-16 read its header as 'y\x00,\x00...'."""
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rb") as f:
            start = f.read(4)
    except (OSError, EOFError):
        start = b""
    if start == b"\xff\xfe\x00\x00":
        return "--encoding utf-32 (the file starts with a UTF-32 byte order mark)"
    if start[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "--encoding utf-16 (the file starts with a UTF-16 byte order mark)"
    return "--encoding latin-1"


def _undecodable(path: Path, encoding: str, chunk_size: int = 1 << 20) -> str:
    """Where the first byte of ``path`` that ``encoding`` cannot decode is: " at byte B (line
    L)", counted in the file (a gzip file's text); "" when it cannot be found."""
    import codecs
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    decoder = codecs.getincrementaldecoder(encoding)()
    offset, lines = 0, 0  # bytes read before this chunk, and their line ends
    try:
        with opener(path, "rb") as f:
            while True:
                chunk = f.read(chunk_size)
                pending = decoder.getstate()[0]  # undecoded bytes at the end of the last chunk
                try:
                    decoder.decode(chunk, final=not chunk)  # the end: a cut-off character fails
                except UnicodeDecodeError as exc:
                    data = pending + chunk
                    at = offset - len(pending) + exc.start
                    line = lines - pending.count(b"\n") + data[: exc.start].count(b"\n") + 1
                    return f" at byte {at} (line {line})"
                if not chunk:
                    break
                offset += len(chunk)
                lines += chunk.count(b"\n")
    except (OSError, LookupError, EOFError):
        pass
    return ""


#: The texts pandas reads as a missing value by default (lower case), and the empty cell.
_MISSING_TEXTS = frozenset(
    {"", "na", "n/a", "nan", "-nan", "+nan", "null", "none", "<na>", "#n/a", "#na", "#n/a n/a",
     "-1.#ind", "1.#ind", "-1.#qnan", "1.#qnan", "-nan(ind)"}
)  # fmt: skip


def _is_missing(cell: Any) -> bool:
    """A CSV cell that stands for a missing value: empty, ``NA``, ``nan``, ``null`` ..."""
    return not isinstance(cell, str) or cell.strip().lower() in _MISSING_TEXTS


def _is_number(cell: Any) -> bool:
    """A CSV cell (text) that holds a number (not NaN: that is a missing value), written as a
    CSV writes one: Python's float() also reads ``1_000`` (more likely an ID or a typo; pandas
    reads it as text) and digits of other scripts (``١٢``), which are not numbers here."""
    if not isinstance(cell, str) or "_" in cell or not cell.isascii():
        return False  # not a string: a row shorter than the others
    return _reads_as_number(cell)


def _reads_as_number(cell: Any) -> bool:
    """A cell Python's float() reads as a number other than NaN (``1_000`` included)."""
    try:
        number = float(cell)
    except (TypeError, ValueError):
        return False
    return number == number


def _describe_cell(cell: Any) -> str:
    if not isinstance(cell, str) or not cell.strip():
        return "an empty cell (a missing value)"
    if _is_missing(cell):
        return f"{cell.strip()!r} (a missing value)"
    return repr(cell)


def _whitespace_separated(path: Path, encoding: str | None) -> bool:
    """A ``.txt`` table of numbers whose first line holds no comma: numbers separated by spaces
    or tabs, as ``numpy.savetxt`` writes by default (a number holds no whitespace)."""
    import gzip

    lower = path.name.lower()
    if not lower.removesuffix(".gz").endswith(".txt"):
        return False
    opener = gzip.open if lower.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding=encoding or "utf-8-sig", errors="replace") as file:
            first = next((line for line in file if line.strip()), "")
    except OSError:
        return False  # read_table names the problem
    return "," not in first and len(first.split()) > 1


def read_numeric_table(path: Path, name: str, *, encoding: str | None = None):
    """A float array (rows x columns) from a CSV/TSV or Parquet table of numbers.

    A CSV may have a header row or none (``numpy.savetxt`` writes none): its first row is the
    header when one of its cells is text that is neither a number nor a missing value, or its
    first cell is empty (pandas' index column). A first row of only the column numbers 0, 1, ...
    (as pandas writes for unnamed columns) cannot be told from data and is refused with a
    message saying how to write the file. With a header whose first cell is empty (pandas'
    index column), a first column of the row numbers 0, 1, ... is dropped. A missing value (an
    empty cell, ``NA`` or ``nan`` in a CSV; a null or NaN in a Parquet file) is refused with its
    place, whatever the format; infinity is a number. A ``.txt`` file whose first line has no
    comma is read as numbers separated by spaces or tabs (``numpy.savetxt``'s default).
    """
    import numpy as np

    path = Path(path)
    if path.name.lower().endswith((".parquet", ".pq")):
        table = read_table(path, name)
        try:
            array = table.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise InputError.bad(
                name, "numeric columns only", list(table.dtypes.astype(str))
            ) from None
        if np.isnan(array).any():
            row, col = np.argwhere(np.isnan(array))[0]
            raise InputError(
                f"{name}: expected numbers only in {path.name}, got a missing value (null or NaN)"
                f" at row {row + 1}, column {str(table.columns[col])!r}",
                argument=name,
            )
    else:
        values = read_table(
            path, name, encoding=encoding, header=None, dtype=str, keep_default_na=False,
            sep=r"\s+" if _whitespace_separated(path, encoding) else None,
        ).to_numpy(dtype=object)  # fmt: skip
        first_line, first_column = 1, 1
        if len(values) and _is_header(values[0]):
            header, values = values[0], values[1:]
            first_line = 2
            numbers = np.arange(len(values)).astype(str)
            if _is_blank(header[0]) and np.array_equal(values[:, 0], numbers):
                values = values[:, 1:]  # pandas' index column under an empty header cell
                first_column = 2
        elif len(values) and [str(c).strip() for c in values[0]] == [
            str(k) for k in range(values.shape[1])
        ]:
            raise InputError(
                f"{name}: the first row of {path.name} is {', '.join(values[0])}: the column "
                "numbers pandas writes as a header, or data? Give the columns names (e.g. x0, "
                "x1, ...), write the table without a header row, or use a .npy file",
                argument=name,
            )
        bad = next(
            (
                (i, j)
                for i, row in enumerate(values)
                for j, c in enumerate(row)
                if not _is_number(c)
            ),
            None,
        )
        if bad is not None:
            i, j = bad
            raise InputError(
                f"{name}: expected numbers only in {path.name}, got "
                f"{_describe_cell(values[i, j])} at line {first_line + i}, column "
                f"{first_column + j}",
                argument=name,
            )
        array = values.astype(np.float64)
    if array.size == 0:
        raise InputError.bad(name, f"at least one row of numbers in {path.name}", "none")
    return array


def _is_header(row) -> bool:
    """A first row of names: one of its cells is text that is neither a number nor a missing
    value, or its first cell is empty (pandas' header over its index column). A row of data
    with a missing value is not taken for a header (it was, and silently dropped), nor one with
    a cell such as ``1_000`` (refused as data, with its place)."""
    return _is_blank(row[0]) or any(not _reads_as_number(c) and not _is_missing(c) for c in row)


def _is_blank(cell: Any) -> bool:
    return not isinstance(cell, str) or not cell.strip()


def require_columns(df, columns: dict[str, str | None]) -> None:
    """Check that each named option's column exists in ``df``."""
    for option, col in columns.items():
        if col is not None and not _has_column(df, col):
            raise InputError(
                f"{option}: expected a column of the data, got {col!r} "
                f"(columns: {', '.join(map(str, df.columns[:20]))}){_separator_hint(df, col)}"
                f"{_spaces_hint(df, col)}",
                argument=option,
            )


def _has_column(df, col) -> bool:
    try:
        return col in df.columns
    except TypeError:  # a list or dict (label=["y"]) is no column name: pandas' TypeError escaped
        return False


def _spaces_hint(df, col: str) -> str:
    """The header names the column with spaces around it (``y, pred, g``: the column is
    ``' pred'``), which the listing of columns does not show; or the name given has spaces
    around it (``' y'``) and the header's has none."""
    spaced = [c for c in df.columns if isinstance(c, str) and c.strip() == str(col).strip()]
    if not spaced:
        return ""
    if spaced[0] == spaced[0].strip():
        return f"; the file names it {spaced[0]!r}, without spaces"
    return (
        f"; the file names it {spaced[0]!r}, with spaces: remove them from the header, or give "
        f"the name with them"
    )


def _separator_hint(df, col: str) -> str:
    """Why a file read as one column lacks the named ones: it is separated by ``;``, tabs or
    ``|`` (a spreadsheet's export in many locales writes ``;``), not by commas. Said only when
    the wanted column is one of the header's pieces: a one-column file whose name holds a ``;``
    as text ("note; see below") is no such file. Commas: a CSV file named .tsv (read as one
    column, the hint said nothing)."""
    header = str(df.columns[0]) if len(df.columns) == 1 else ""
    for char, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'"), (",", "commas")):
        if str(col) in (piece.strip() for piece in header.split(char)):
            fix = {"\t": "name it .tsv", ",": "name it .csv"}.get(
                char, "save it with commas as a .csv"
            )
            return f"; the file looks separated by {name}, but was read as one column: {fix}"
    return ""

"""Input readers of ``trustlab robustness``: the data (digits or a table/.npz), the cost matrix
and the harmful pairs, checked for format here and for values by the library."""

from __future__ import annotations

import zipfile
from pathlib import Path

from trustlab.cli._common import npy_reason, read_table
from trustlab.errors import InputError

__all__ = ["digits_split", "parse_harmful", "read_cost_matrix", "read_data"]


def digits_split(data: str, split: str | None, default: str) -> str:
    """``split`` or the command's default; refused with another ``--data`` (it was ignored)."""
    if split is not None and data != "digits":
        raise InputError(
            f"--split: applies to --data digits only, got --split {split} with --data {data}",
            argument="--split",
        )
    return default if split is None else split


def read_data(data: str, label: str = "label", split: str = "train", encoding: str | None = None):
    """Features ``(n, d)`` and labels from 'digits', a table or an .npz file.

    Only the file formats are checked here; the values (numbers, class indices, lengths) are
    checked by the library functions they are passed to.
    """
    import numpy as np

    if data == "digits":
        from trustlab.robustness import load_digits_split

        return load_digits_split(split)
    path = Path(data)
    if not path.is_file():
        raise InputError.bad("--data", "'digits' or an existing .csv/.parquet/.npz file", data)
    if path.suffix.lower() == ".npz":
        try:
            with np.load(path, allow_pickle=False) as archive:
                if "X" not in archive.files or "y" not in archive.files:
                    raise InputError.bad("--data", 'an .npz with arrays "X" and "y"', archive.files)
                X, y = archive["X"], archive["y"]
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            if isinstance(exc, InputError):
                raise
            why = npy_reason(exc)
            raise InputError(f"--data: could not read {path}: {why}", argument="--data") from exc
        if X.ndim != 2:
            raise InputError.bad("--data", 'an .npz array "X" of shape (n, features)', X)
    else:
        table = read_table(path, "--data", encoding=encoding)
        if label not in table.columns:
            raise InputError.bad("--label", f"a column of {path.name}", label)
        y = table[label].to_numpy()
        if table.columns[0] == "Unnamed: 0" != label:  # the row index pandas' to_csv writes
            table = table.iloc[:, 1:]
        X = table.drop(columns=[label]).to_numpy()
    return X, y


def read_cost_matrix(path: Path, encoding: str | None = None, n_classes: int | None = None):
    """A K x K cost matrix from a CSV, its rows and columns placed by their labels if it has any.

    The layout is read from the table's shape (as the commands' help says): (K+1) x K has a
    header row, K x (K+1) an index column, and a square table has both when its top-left cell is
    empty or text (what ``pandas.DataFrame.to_csv`` writes) and none when that cell is a number.
    Labels must be the class indices 0..K-1, each once, in any order. A square table of numbers
    whose first row and first column could be either labels or costs is read by ``n_classes``
    (the model's, or the labels' count): costs when it has that many rows, labels when one more;
    without it, or when neither fits, it is refused rather than guessed.
    """
    import numpy as np
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError.bad("--cost-matrix", "an existing CSV file", str(path))
    try:
        table = pd.read_csv(path, header=None, dtype=str, skipinitialspace=True, encoding=encoding)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"--cost-matrix: could not read {path} as {encoding or 'utf-8'} text ({exc.reason}); "
            "name its encoding with --encoding, e.g. --encoding latin-1",
            argument="--cost-matrix",
        ) from None
    except LookupError:
        raise InputError.bad(
            "--encoding", "a text encoding such as utf-8 or latin-1", encoding
        ) from None
    except Exception as exc:  # parser errors become one clear line
        raise InputError(
            f"--cost-matrix: could not read {path}: {exc}", argument="--cost-matrix"
        ) from exc
    values = table.to_numpy(dtype=object)
    header, index = _cost_layout(values, path.name, n_classes)
    body = values[int(header) :, int(index) :]
    try:
        costs = body.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError.bad(
            "--cost-matrix", f"a square table of numbers in {path.name}", body.tolist()
        ) from None
    if costs.ndim != 2 or costs.shape[0] != costs.shape[1]:
        raise InputError.bad("--cost-matrix", f"a full K x K table in {path.name}", costs)
    if np.isnan(costs).any():
        i, j = (int(k) for k in np.argwhere(np.isnan(costs))[0])
        raise InputError(
            f"--cost-matrix: expected a number in every cell of {path.name}, got an empty (or "
            f"NaN) cell at line {i + int(header) + 1}, column {j + int(index) + 1}",
            argument="--cost-matrix",
        )
    size = len(costs)
    rows = _class_labels(values[int(header) :, 0], size) if index else np.arange(size)
    columns = _class_labels(values[0, 1:] if index else values[0], size) if header else None
    if index and rows is None:
        raise InputError.bad(
            "--cost-matrix", f"a first column of the class indices 0..{size - 1} (each once) in "
            f"{path.name}", values[1 if header else 0 :, 0].tolist(),
        )  # fmt: skip
    if header and columns is None:
        raise InputError.bad(
            "--cost-matrix", f"a header row of the class indices 0..{size - 1} (each once) in "
            f"{path.name}", values[0, 1 if index else 0 :].tolist(),
        )  # fmt: skip
    placed = np.empty_like(costs)
    placed[np.ix_(rows, np.arange(size) if columns is None else columns)] = costs
    return placed


def _number(cell) -> float | None:
    """A cell's number, or None for an empty or text cell."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return None if value != value else value


def _class_labels(cells, size: int):
    """The class indices that ``cells`` name if they are 0..size-1 each once, else None."""
    import numpy as np

    numbers = [_number(cell) for cell in cells]
    if len(numbers) != size or any(n is None or not n.is_integer() for n in numbers):
        return None
    labels = np.array([int(n) for n in numbers])
    return labels if sorted(labels.tolist()) == list(range(size)) else None


def _cost_layout(values, name: str, n_classes: int | None = None) -> tuple[bool, bool]:
    """Whether a cost table has a header row and an index column."""
    rows, columns = values.shape
    if rows == columns + 1:
        return True, False
    if columns == rows + 1:
        return False, True
    if rows != columns or rows == 0:
        return False, False  # refused as not K x K
    if _number(values[0, 0]) is None:  # an empty or text corner: a header row and an index column
        return True, True
    if (
        rows >= 3
        and _number(values[0, 0]) == 0
        and _class_labels(values[0, 1:], rows - 1) is not None
        and _class_labels(values[1:, 0], rows - 1) is not None
    ):
        if n_classes == rows:  # the classes say which: K rows of costs
            return False, False
        if n_classes == rows - 1:  # or labels around K x K costs
            return True, True
        raise InputError(
            f"--cost-matrix: expected either a table of costs or a header row and an index column "
            f"of class indices under an empty top-left cell, got a {rows} x {columns} table of "
            f"numbers in {name} whose first row and first column could be either (a 0 in the "
            "top-left cell); leave that cell empty if they are class indices, or add such a header "
            "row and index column (pandas' DataFrame.to_csv writes them) if they are costs",
            argument="--cost-matrix",
        )
    return False, False


def parse_harmful(values: list[str], n_classes: int):
    """Harmful pairs from "SEED:TARGET[,TARGET...]" strings, as a binary cost matrix.

    The library checks the class indices (its errors name ``harmful``: ``--harmful`` here).
    """
    from trustlab.robustness import make_cost_matrix

    pairs = []
    for value in values:
        seed, _, targets = value.partition(":")
        try:
            pairs += [(int(seed), int(t)) for t in targets.split(",")]
        except ValueError:
            raise InputError.bad(
                "--harmful", "SEED:TARGET[,TARGET...] with class indices", value
            ) from None
    return make_cost_matrix(n_classes, pairs)

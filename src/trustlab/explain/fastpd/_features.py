"""Naming features and outputs: what a user passes (names or indices) and how subsets are shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab.errors import InputError

__all__ = [
    "TIMES",
    "subset_label",
    "resolve_features",
    "resolve_output",
    "squeeze_output",
    "beyond_input_dtype",
    "feature_columns",
    "numeric_frame",
    "explained_row_ids",
]

TIMES = " \u00d7 "


def beyond_input_dtype(values: np.ndarray, dtype: Any) -> tuple[int, int] | None:
    """The first (row, column) whose finite value the model's input cast (float32 for
    scikit-learn trees and xgboost) would turn into infinity, which the model refuses; or None."""
    if np.dtype(dtype).itemsize >= values.dtype.itemsize:
        return None
    with np.errstate(invalid="ignore"):
        big = np.abs(values) > np.finfo(dtype).max
    if not big.any():
        return None
    row, col = (int(i) for i in np.argwhere(big)[0])
    return row, col


def subset_label(subset: tuple[int, ...], names: Sequence[str], sep: str = ":") -> str:
    """'a:b' in JSON keys (R's notation for an interaction), 'a × b' in text and plots."""
    return sep.join(names[j] for j in subset) if subset else "(intercept)"


def resolve_features(features: Any, names: Sequence[str], argument: str) -> list[int]:
    """Feature names or indices (one, or a sequence) -> distinct indices, in the given order."""
    if isinstance(features, (str, int, np.integer)):
        features = [features]
    try:
        items = list(features)
    except TypeError:  # None, a float, ...: not a feature nor a sequence of them
        raise InputError.bad(
            argument, "a feature name or index, or a sequence of them", features
        ) from None
    out = []
    for item in items:
        if isinstance(item, str):
            if item not in names:
                shown = ", ".join(list(names)[:20])
                raise InputError.bad(argument, f"feature names among: {shown}", item)
            out.append(list(names).index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if not 0 <= item < len(names):
                raise InputError.bad(argument, f"feature indices in [0, {len(names)})", item)
            out.append(int(item))
        else:
            raise InputError.bad(argument, "feature names or integer indices", item)
    if len(set(out)) != len(out):
        raise InputError.bad(argument, "distinct features", items)
    return out


def feature_columns(X: Any, names: Sequence[str], argument: str) -> Any:
    """A DataFrame's columns ``names``, in that order. A name held by two columns is refused:
    which one is the feature is not known (taking the first dropped the other feature's values)."""
    columns = [str(c) for c in X.columns]
    missing = [c for c in names if c not in columns]
    if missing:
        raise InputError.bad(argument, f"the feature columns {list(names)}", columns)
    twice = [c for c in dict.fromkeys(names) if columns.count(c) > 1]
    if twice:
        raise InputError(
            f"{argument}: expected one column per feature, got {len(twice)} name(s) held by "
            f"several columns ({', '.join(map(repr, twice[:5]))}); rename or drop the copies",
            argument=argument,
        )
    return X.iloc[:, [columns.index(c) for c in names]]


def numeric_frame(X: Any, argument: str) -> Any:
    """``X`` (a DataFrame) when every column reads as numbers (as the float conversion and
    scikit-learn read them: a category of numbers, an object column of numbers or numeric strings
    count); else an InputError naming the columns that do not (not the frame's whole text).
    Dates and durations are left to the float conversion, which refuses them as such."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    text = []
    for i, (c, dtype) in enumerate(X.dtypes.items()):
        if is_numeric_dtype(dtype) or is_bool_dtype(dtype) or getattr(dtype, "kind", "O") in "mM":
            continue
        try:
            X.iloc[:, i].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            text.append((c, dtype))
    if text:
        kinds = ", ".join(f"{c!r} ({dtype})" for c, dtype in text[:10])
        raise InputError(
            f"{argument}: expected numeric feature columns, got {len(text)} that are not: "
            f"{kinds}; encode them as numbers, or explain a Pipeline whose transform does",
            argument=argument,
        )
    return X


def resolve_output(output: int | str, names: Sequence[str]) -> int:
    """An output name or index -> its index."""
    if isinstance(output, str):
        if output not in names:
            raise InputError.bad("output", f"one of {list(names)}", output)
        return list(names).index(output)
    if isinstance(output, (int, np.integer)) and 0 <= output < len(names):
        return int(output)
    raise InputError.bad("output", f"an output name or an index below {len(names)}", output)


def squeeze_output(arr: np.ndarray) -> np.ndarray:
    """Drop the trailing output axis of a single-output result (shap's convention)."""
    return arr[..., 0] if arr.shape[-1] == 1 else arr


def dense_rows(X: Any, name: str) -> Any:
    """Rows as the float conversion reads them: a scipy sparse matrix is refused as such, and
    pandas' own missing value (pd.NA of the nullable dtypes, which scikit-learn reads as NaN)
    becomes NaN; anything else is returned as it came."""
    from scipy.sparse import issparse

    if issparse(X):
        raise InputError(
            f"{name}: expected a dense array, got a scipy sparse matrix (convert it with "
            ".toarray())",
            argument=name,
        )
    if getattr(X, "ndim", None) == 2 and hasattr(X, "to_numpy"):  # a DataFrame
        if any(getattr(t, "kind", "O") in "mMc" for t in getattr(X, "dtypes", ())):
            return X  # dates, durations, complex: refused as before, not read as their unit/real
        try:
            return X.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):  # text: refused by the float conversion, naming it
            return X
    return X


def explained_row_ids(X: Any, row_ids: Any) -> np.ndarray | None:
    """The ids of the explained rows: as given, else a DataFrame's index, else None (0..n-1)."""
    if row_ids is not None:
        if isinstance(row_ids, (list, tuple)) and any(isinstance(i, tuple) for i in row_ids):
            ids = np.empty(len(row_ids), dtype=object)  # tuple ids, as a MultiIndex gives them
            for i, value in enumerate(row_ids):
                ids[i] = value
            return ids
        try:
            ids = np.asarray(row_ids.to_numpy() if hasattr(row_ids, "to_numpy") else row_ids)
        except ValueError:  # ragged lists
            ids = None
        if ids is None or ids.ndim != 1:  # a scalar (or a string) has no len(): a bare TypeError
            raise InputError.bad("row_ids", "a 1-D sequence of ids, one per row", row_ids)
        return ids
    index = getattr(X, "index", None)
    return None if index is None else index.to_numpy()

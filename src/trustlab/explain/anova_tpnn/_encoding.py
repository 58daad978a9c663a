"""ANOVA-TPNN's inputs: a table's features encoded for the network.

Numeric features go through a uniform quantile transform to [-1, 1] (scikit-learn's
``QuantileTransformer``, mapped); categorical features become integer level codes (-1 for a level
unseen in training; a value is matched by its text too, so "1" and 1 are one level).
:class:`FeatureMap` is fitted on the training table and saved with the model.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import issparse

from trustlab.errors import InputError, describe

__all__ = [
    "FeatureMap",
    "as_frame",
    "categorical_flags",
    "feature_index",
    "level_key",
    "python_value",
]


def as_frame(X: Any, name: str = "X", *, min_rows: int = 1) -> pd.DataFrame:
    """A DataFrame with string column names (arrays get x0, x1, ...).

    Refused, in scikit-learn's words where its checks look for them: sparse and complex input,
    anything but 2 dimensions, no column, fewer than ``min_rows`` rows.
    """
    if issparse(X):
        raise InputError(
            f"{name}: expected a dense array or DataFrame, got a scipy sparse matrix (sparse "
            "input is not supported; convert it with .toarray())",
            argument=name,
        )
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        try:
            arr = np.asarray(X)
        except Exception:
            raise InputError.bad(name, "a 2-dimensional array or DataFrame", X) from None
        if arr.ndim != 2:
            raise InputError(
                f"{name}: expected a 2-dimensional array or DataFrame, got "
                f"{describe(arr)}. Reshape your data with X.reshape(-1, 1) for a single "
                "feature or X.reshape(1, -1) for a single row",
                argument=name,
            )
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])]).infer_objects()
    if any(pd.api.types.is_complex_dtype(dtype) for dtype in frame.dtypes):
        raise InputError(
            f"{name}: expected real numbers or labels, got complex numbers (Complex data not "
            "supported)",
            argument=name,
        )
    _check_size(frame.shape, name, min_rows)
    frame = frame.copy(deep=False)
    frame.columns = [str(c) for c in frame.columns]
    if len(set(frame.columns)) != frame.shape[1]:
        raise InputError.bad(name, "distinct column names", list(frame.columns))
    return frame


def _check_size(shape: tuple[int, int], name: str, min_rows: int) -> None:
    """At least one column and ``min_rows`` rows, said as scikit-learn says it."""
    if shape[1] == 0:
        raise InputError(
            f"{name}: found array with 0 feature(s) (shape={shape}) while a minimum of 1 is "
            "required.",
            argument=name,
        )
    if shape[0] < min_rows:
        raise InputError(
            f"{name}: found array with {shape[0]} sample(s) (shape={shape}) while a minimum of "
            f"{min_rows} is required.",
            argument=name,
        )


def _is_categorical_dtype(column: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def python_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def level_key(value: Any) -> Any:
    """A categorical level as it is stored: a Python string, number or boolean, or else the
    value's text (dates, tuples, dicts in an object column), which is what a saved model's JSON
    holds and reads back as it was (a date or a tuple would come back as another text or a list).
    """
    if isinstance(value, (np.datetime64, np.timedelta64)):
        value = pd.Timestamp(value) if isinstance(value, np.datetime64) else pd.Timedelta(value)
    value = python_value(value)
    if isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def _sorted_levels(values: Sequence[Any]) -> tuple:
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types: order by text
        return tuple(sorted(values, key=str))


@dataclass(frozen=True)
class FeatureMap:
    """Per feature: numeric (quantile transform to [-1, 1]) or categorical (integer codes)."""

    names: tuple[str, ...]
    categorical: tuple[bool, ...]
    quantiles: tuple[np.ndarray | None, ...]
    levels: tuple[tuple | None, ...]

    @classmethod
    def fit(cls, frame: pd.DataFrame, categorical: Sequence[bool], n_quantiles: int) -> FeatureMap:
        quantiles, levels = [], []
        for name, is_cat in zip(frame.columns, categorical, strict=True):
            column = frame[name]
            if is_cat:
                _check_no_missing(column, name)
                # each value as transform sees it (a datetime64 column: Timestamps, not numpy's
                # datetime64 that pd.unique gives), then as it is stored
                found = _sorted_levels({level_key(v) for v in column})
                if len(found) < 2:
                    raise InputError.bad(
                        "X", f"feature {name!r} to take at least 2 values", f"only {found[0]!r}"
                    )
                quantiles.append(None)
                levels.append(found)
            else:
                values = _numeric_column(column, name)
                if values.min() == values.max():
                    raise InputError.bad(
                        "X",
                        f"feature {name!r} to vary (a constant carries no information)",
                        f"the constant {values[0]:g} in every row",
                    )
                count = min(n_quantiles, len(values))
                probabilities = np.linspace(0.0, 1.0, count) * 100.0  # as scikit-learn (ties)
                quantiles.append(np.maximum.accumulate(np.percentile(values, probabilities)))
                levels.append(None)
        return cls(
            tuple(frame.columns),
            tuple(bool(c) for c in categorical),
            tuple(quantiles),
            tuple(levels),
        )

    @property
    def n_levels(self) -> int:
        return max([len(lv) for lv in self.levels if lv is not None], default=0)

    def transform(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``x_num`` (quantile-transformed numeric features, 0 elsewhere) and ``x_cat`` (level
        codes of categorical features, -1 for an unseen level, 0 elsewhere)."""
        n = len(frame)
        x_num = np.zeros((n, len(self.names)))
        x_cat = np.zeros((n, len(self.names)), dtype=np.int64)
        for j, name in enumerate(self.names):
            column = frame[name]
            if self.categorical[j]:
                _check_no_missing(column, name)
                x_cat[:, j] = _level_codes(self.levels[j], column)
                _warn_unseen(name, column, x_cat[:, j] < 0)
            else:
                x_num[:, j] = self.quantile_scale(j, _numeric_column(column, name))
        return x_num, x_cat

    def quantile_scale(self, j: int, values: np.ndarray) -> np.ndarray:
        """scikit-learn's uniform QuantileTransformer, mapped to [-1, 1]. Interpolating up and
        down and averaging puts a tied value in the middle of its range of quantiles."""
        q = self.quantiles[j]
        r = np.linspace(0.0, 1.0, len(q))
        u = 0.5 * (np.interp(values, q, r) - np.interp(-values, -q[::-1], -r[::-1]))
        u[values == q[-1]] = 1.0
        u[values == q[0]] = 0.0
        return 2.0 * np.clip(u, 0.0, 1.0) - 1.0

    def raw_grid(self, j: int, n_points: int) -> np.ndarray:
        """Raw values to draw feature j on: levels, or an even grid joined with quantiles (so both
        the range and the dense parts of the data are resolved)."""
        if self.categorical[j]:
            return np.asarray(self.levels[j], dtype=object)
        q = self.quantiles[j]
        even = np.linspace(q[0], q[-1], n_points)
        spread = q[np.linspace(0, len(q) - 1, n_points).round().astype(int)]
        return np.unique(np.concatenate([even, spread]))

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {
            "names": list(self.names),
            "categorical": list(self.categorical),
            "levels": [None if lv is None else list(lv) for lv in self.levels],
        }
        arrays = {f"quantiles.{j}": q for j, q in enumerate(self.quantiles) if q is not None}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> FeatureMap:
        quantiles = tuple(arrays.get(f"quantiles.{j}") for j in range(len(meta["names"])))
        levels = tuple(None if lv is None else tuple(lv) for lv in meta["levels"])
        return cls(tuple(meta["names"]), tuple(meta["categorical"]), quantiles, levels)


def _level_codes(levels: Sequence[Any], column: pd.Series) -> list[int]:
    """Each value's index among ``levels`` (-1 if unseen). A value not found as it is, is looked
    up by its text: a column read as text in one file ("1", "2", "x") and as numbers in another
    (1, 2) has the same levels, and a whole number's text is one for all its forms (1, 1.0,
    "1.0"). Texts shared by two levels (1 and "1") match neither."""
    codes = {level: i for i, level in enumerate(levels)}
    by_text: dict[str, int] = {}
    for i, level in enumerate(levels):
        text = _text(level)
        by_text[text] = -1 if text in by_text else i
    found = []
    for value in column:
        key = level_key(value)
        code = codes.get(key)
        found.append(by_text.get(_text(key), -1) if code is None else code)
    return found


# a date or a duration as str() and a CSV file write it: "2024-03-01 00:00:00" / "2024-03-01",
# "1 days 00:00:00" / "1 days", "-1 days +00:00:00" / "-1 days" (a negative duration's time of
# day has a "+"), "... 10:00:00.500000" / "... 10:00:00.500"
_TIME_TEXT = re.compile(
    r"^(\d{4}-\d{2}-\d{2}|-?\d+ days?)(?:( \+?)(\d{2}:\d{2}:\d{2})(?:\.(\d*))?)?$"
)


def _time_text(text: str) -> str:
    """One text for a date or duration in the forms str() and a CSV file give it: fractional
    seconds without trailing zeros, and no time of day at midnight."""
    match = _TIME_TEXT.match(text)
    if match is None:
        return text
    day, space, clock = match.group(1), match.group(2), match.group(3)
    fraction = (match.group(4) or "").rstrip("0")
    if clock is None or (clock == "00:00:00" and not fraction):
        return day
    return f"{day}{space}{clock}" + (f".{fraction}" if fraction else "")


def _text(level: Any) -> str:
    """A level's text for matching: a number written as a whole number where it is one ("1" for
    1, 1.0 and "1.0"; str(1.0) is "1.0", which a column read as integers never gives), a date
    or duration as in :func:`_time_text` (a date column written to CSV and read back as text)."""
    if isinstance(level, str):
        try:
            number = float(level)
        except ValueError:
            return _time_text(level)
        level = number if np.isfinite(number) else level
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)


def _warn_unseen(name: str, column: pd.Series, unseen: np.ndarray) -> None:
    """Say so when a categorical feature has levels not seen in training (their component is 0)."""
    if unseen.any():
        values = list(dict.fromkeys(str(v) for v in column[unseen]))
        shown = ", ".join(map(repr, values[:5])) + (", ..." if len(values) > 5 else "")
        warnings.warn(
            f"X: feature {name!r} has {int(unseen.sum())} value(s) not seen in training "
            f"({shown}); their components count 0 (the training average)",
            UserWarning,
            stacklevel=4,
        )


def _check_no_missing(column: pd.Series, name: str) -> None:
    missing = column.isna().to_numpy()
    if missing.any():
        raise InputError(
            f"X: expected no missing values, got {int(missing.sum())} in feature {name!r} (first "
            f"at row {int(np.argmax(missing))}); impute them first",
            argument="X",
        )


def _numeric_column(column: pd.Series, name: str) -> np.ndarray:
    if _is_categorical_dtype(column) and not _numbers_as_category(column):
        # name the first value that is not a number ("unknown" in a column of incomes)
        text = pd.to_numeric(column, errors="coerce").isna().to_numpy() & column.notna().to_numpy()
        if pd.api.types.is_bool_dtype(column) or not column.notna().any():
            raise InputError.bad("X", f"numbers in the numeric feature {name!r}", column.to_numpy())
        if not text.any():  # numbers written as text ("0.5"): say so, not "dtype object"
            first = python_value(column.to_numpy()[column.notna().to_numpy()][0])
            raise InputError(
                f"X: expected numbers in the numeric feature {name!r}, got numbers written as "
                f"text (e.g. {first!r}, dtype {column.dtype}); convert the column to numbers "
                "(pandas.to_numeric)",
                argument="X",
            )
        raise InputError(
            f"X: expected numbers in the numeric feature {name!r}, got "
            f"{python_value(column.to_numpy()[text][0])!r} (first at row {int(np.argmax(text))}, "
            f"{int(text.sum())} in all)",
            argument="X",
        )
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        first = values[bad][0]
        word = "NaN" if np.isnan(first) else ("inf" if first > 0 else "-inf")
        raise InputError(
            f"X: expected finite values, got {word} in feature {name!r} (first at row "
            f"{int(np.argmax(bad))}, {int(bad.sum())} in all); impute or drop them first",
            argument="X",
        )
    return values


def _numbers_as_category(column: pd.Series) -> bool:
    """Numbers held as categories: a pandas category of numbers (a categorised frame, a Parquet
    file) or an object column of Python/numpy numbers; taken as their numbers. Not booleans."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = column.cat.categories
        return pd.api.types.is_numeric_dtype(categories) and not pd.api.types.is_bool_dtype(
            categories
        )
    observed = column.dropna()
    return (
        column.dtype == object
        and len(observed) > 0
        and all(
            isinstance(v, (int, float, np.integer, np.floating))
            and not isinstance(v, (bool, np.bool_))
            for v in observed
        )
    )


def categorical_flags(frame: pd.DataFrame, categorical_features: Any) -> list[bool]:
    names = list(frame.columns)
    if isinstance(categorical_features, str) and categorical_features == "auto":
        return [_is_categorical_dtype(frame[c]) for c in names]
    if categorical_features is None:
        return [False] * len(names)
    if isinstance(categorical_features, str) or not isinstance(categorical_features, Sequence):
        raise InputError.bad(
            "categorical_features",
            "'auto', None or a list of feature names or indices",
            categorical_features,
        )
    chosen = {
        names[feature_index(item, names, "categorical_features")] for item in categorical_features
    }
    return [c in chosen for c in names]


def feature_index(item: Any, names: Sequence[str], argument: str) -> int:
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if 0 <= item < len(names):
            return int(item)
        raise InputError.bad(argument, f"feature indices in [0, {len(names) - 1}]", item)
    if isinstance(item, str) and item in names:
        return names.index(item)
    raise InputError.bad(argument, "feature names among " + ", ".join(map(repr, names)), item)

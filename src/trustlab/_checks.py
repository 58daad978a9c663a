"""Shared validation for the public boundary.

Every public function converts and validates its inputs once, with these helpers, and raises
:class:`trustlab.errors.InputError` naming the argument, what was expected and what came.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trustlab.errors import ConfigError, InputError, describe

__all__ = [
    "check_random_state",
    "check_int_seed",
    "repeated",
    "RepeatedKeyError",
    "unique_keys",
    "check_string_list",
    "as_float_array",
    "as_1d",
    "check_finite",
    "is_missing",
    "whole_number",
    "check_same_length",
    "check_probability_vector",
    "check_row_stochastic",
    "check_positive_int",
    "check_in_range",
    "check_choice",
    "check_positive",
    "check_non_negative",
    "check_probability",
    "check_n_jobs",
    "check_bool",
    "check_string",
    "check_callable",
    "check_existing_file",
    "check_class_indices",
    "check_device",
    "resolve_device",
    "npy_reason",
    "shown_url",
    "MAX_TIMEOUT_S",
]

MAX_TIMEOUT_S = 1e9  # a socket timeout ends near 9.2e9 s (int64 ns): past it an OverflowError


def check_random_state(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """Turn None, an int or a numpy Generator into a Generator (the same seed, the same stream)."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InputError.bad(name, "a non-negative integer seed", random_state)
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise InputError.bad(name, "None, an int seed or a numpy Generator", random_state)


def check_int_seed(random_state: Any, name: str = "random_state") -> int:
    """A non-negative int seed (a SeedSequence's entropy): no bool, float, None or Generator."""
    ok = isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
    if not ok or random_state < 0:  # 1.5 would be cut to 1, -1 or "x" a raw ValueError
        raise InputError.bad(name, "a non-negative int seed", random_state)
    return int(random_state)


def as_float_array(
    value: Any,
    name: str,
    *,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    allow_nan: bool = False,
    min_size: int = 1,
) -> np.ndarray:
    """Convert ``value`` to a float64 array and check its dimensions, shape and finiteness
    (``allow_nan`` lets NaN through, never infinity)."""
    kinds = _dtype_kinds(value)
    if "c" in kinds:  # numpy would drop the imaginary parts with only a warning
        raise InputError.bad(name, "real numbers", value)
    if kinds & {"M", "m"}:  # numpy would read them as counts of their unit
        raise InputError.bad(name, "numbers, not dates or durations", value)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        arr = _missing_as_nan(value)
        if arr is None:
            raise InputError.bad(name, "numeric array-like", value) from None
    if ndim is not None and arr.ndim != ndim:
        raise InputError.bad(name, f"a {ndim}-dimensional array", arr)
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape, strict=True)
        ):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise InputError.bad(name, f"shape {want}", arr)
    if arr.size < min_size:
        raise InputError.bad(name, f"at least {min_size} element(s)", arr)
    check_finite(
        np.nan_to_num(arr, nan=0.0, posinf=np.inf, neginf=-np.inf) if allow_nan else arr, name
    )
    return arr


def _dtype_kinds(value: Any) -> set[str]:
    """The numpy dtype kinds of a numpy array, pandas Series or DataFrame (empty for others)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return {getattr(dtype, "kind", "")}
    dtypes = getattr(value, "dtypes", None)
    try:
        return {getattr(d, "kind", "") for d in dtypes} if dtypes is not None else set()
    except TypeError:
        return set()


def _missing_as_nan(value: Any) -> np.ndarray | None:
    """``value`` as float64 with pandas' missing values (``pd.NA`` of the nullable booleans,
    ``None``/``pd.NA`` in object columns) as NaN, as scikit-learn reads them; None when
    something other than a missing value stops the conversion (text, for one)."""
    try:
        import pandas as pd

        objects = np.array(value, dtype=object)
        missing = pd.isna(objects)
        if not np.any(missing):
            return None
        objects[missing] = np.nan
        return np.asarray(objects, dtype=np.float64)
    except (TypeError, ValueError, ImportError):
        return None


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if ``arr`` holds NaN or infinity, saying where the first one is."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"{name}: expected finite values, got {arr[where]} at index {where} "
            f"({int(bad.sum())} non-finite value(s) in all)",
            argument=name,
        )


def check_finite_rows(X: np.ndarray, name: str) -> None:
    """Raise if the 2-D ``X`` holds NaN or infinity, naming the first one as ``NaN``/``inf``/
    ``-inf`` at its row and column (the words scikit-learn's estimator checks look for)."""
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        value = X[row, column]
        word = "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
        raise InputError(
            f"{name}: expected finite values, got {word} at row {row}, column {column} "
            f"({int(bad.sum())} non-finite value(s) in all)",
            argument=name,
        )


class NotNumbers(InputError, TypeError):
    """Values that are not numbers (a dict, say): an InputError, and a TypeError as numpy's own
    conversion error is (the type scikit-learn's checks expect)."""

    def __init__(self, message: str, argument: str):
        super().__init__(message, argument=argument)


def check_rows(
    X: Any,
    name: str,
    *,
    estimator: str,
    n_features: int | None = None,
    one_row: bool = False,
    min_rows: int = 1,
    what: str = "rows",
) -> np.ndarray:
    """An estimator's input rows as a dense, finite float64 array of shape (n, d), d >= 1 and
    n >= ``min_rows``.

    Every refusal is an :class:`~trustlab.errors.InputError` naming the argument; where
    scikit-learn's estimator checks look for particular words, the message carries them as well
    ("sparse", "Complex data not supported", "Reshape your data", "NaN", "inf", "0 feature(s)",
    "X has 1 features, but <estimator> is expecting 2 features as input", "1 sample").
    ``n_features``: the width the fitted estimator reads (None while fitting). ``one_row``: a
    1-D vector is one row; otherwise it is refused, as scikit-learn's ``predict`` refuses it.
    ``what``: what the rows are, in the width message ("activations of width 5").
    """
    from scipy.sparse import issparse

    if issparse(X):
        raise InputError(
            f"{name}: expected a dense array, got a scipy sparse matrix (sparse input is not "
            "supported; convert it with .toarray())",
            argument=name,
        )
    try:
        raw = np.asarray(X)
    except (TypeError, ValueError):  # ragged rows, say
        raise InputError.bad(name, "numeric array-like", X) from None
    if np.iscomplexobj(raw):
        raise InputError(
            f"{name}: expected real numbers, got complex numbers (Complex data not supported)",
            argument=name,
        )
    try:
        arr = raw.astype(np.float64)
    except TypeError as error:  # a dict in an object array: numpy's TypeError, kept one
        raise NotNumbers(
            f"{name}: expected numbers, got a value that is not a number ({error})", name
        ) from None
    except ValueError:  # text
        raise InputError.bad(name, "numeric array-like", X) from None
    if arr.ndim == 1 and one_row:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InputError(
            f"{name}: expected a 2-dimensional array (n, d), got {describe(arr)}. Reshape your "
            "data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single row",
            argument=name,
        )
    rows, columns = arr.shape
    if n_features is not None and columns != n_features:
        raise InputError(
            f"{name}: expected {what} of width {n_features} (n, {n_features}), got "
            f"{describe(arr)} (X has {columns} features, but {estimator} is expecting "
            f"{n_features} features as input)",
            argument=name,
        )
    if columns == 0 or (rows == 0 and min_rows > 0):
        kind = "sample" if rows == 0 else "feature"
        raise InputError(
            f"{name}: found array with 0 {kind}(s) (shape={arr.shape}) while a minimum of 1 is "
            "required.",
            argument=name,
        )
    if rows < min_rows:
        raise InputError(
            f"{name}: expected at least {min_rows} rows, got {rows} ({rows} sample"
            f"{'' if rows == 1 else 's'}, n_samples = {rows})",
            argument=name,
        )
    check_finite_rows(arr, name)
    return arr


def as_1d(value: Any, name: str, *, min_size: int = 1) -> np.ndarray:
    """A 1-D array of any dtype (labels, groups); pandas objects and lists are accepted."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    try:
        arr = np.asarray(value)
    except ValueError:  # a ragged list such as [[1, 2], [3]]
        raise InputError.bad(name, "a 1-dimensional array", value) from None
    arr = arr.ravel() if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise InputError.bad(name, "a 1-dimensional array", arr)
    if arr.size < min_size:
        raise InputError.bad(name, f"at least {min_size} element(s)", arr)
    if isinstance(value, (list, tuple)) and arr.dtype.kind == "U":
        _check_text_keeps_labels_apart(value, arr, name)
    nan = {"f": np.isnan, "m": np.isnat, "M": np.isnat}.get(arr.dtype.kind)
    if nan is not None and nan(arr).any():
        got = "NaN" if arr.dtype.kind == "f" else "NaT"
        raise InputError(f"{name}: expected no missing values, got {got}", argument=name)
    if arr.dtype.kind == "O":
        missing = [i for i, v in enumerate(arr) if is_missing(v)]
        if missing:
            raise InputError(
                f"{name}: expected no missing values, got {len(missing)} (first at index "
                f"{missing[0]})",
                argument=name,
            )
    return arr


def whole_number(value: Any) -> Any:
    """``value`` where it is a whole number (an int, a numpy integer, a finite integral float, or
    a 0-d array or tensor of one, read as its item), else None (bools, strings, fractions): the
    layer checks of the polytope and the SAE intervention (int() read True, 2.7 and "1" as 1)."""
    zero_d = np.ndim(value) == 0 and not isinstance(value, np.generic)
    value = value.item() if zero_d and callable(getattr(value, "item", None)) else value
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, numbers.Integral):
        return value
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return value
    return None


def is_missing(value: Any) -> bool:
    """None, a float NaN, or pandas' NA / NaT (a pandas "string" column holds pd.NA, which
    otherwise surfaced as "labels of one comparable type" when the labels were sorted)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, (float, np.floating, np.datetime64, np.timedelta64)):
        return bool(value != value)  # NaN and NaT are unequal to themselves
    return False


def _check_text_keeps_labels_apart(value: Sequence[Any], arr: np.ndarray, name: str) -> None:
    """numpy turns a list mixing numbers and text into text: refuse it where that merges two
    labels (``[1, "1"]`` would become one group "1") or makes a missing value a label ("nan")."""
    seen: dict[str, Any] = {}
    for i, (v, text) in enumerate(zip(value, arr.tolist(), strict=True)):
        if v is None or (isinstance(v, float) and v != v):  # numpy wrote it as "None"/"nan"
            raise InputError(
                f"{name}: expected no missing values, got {v!r} at index {i}", argument=name
            )
        first = seen.setdefault(text, v)
        if type(first) is not type(v):
            raise InputError(
                f"{name}: expected labels that stay distinct as text, got {first!r} and {v!r}, "
                f"which both read as {text!r}",
                argument=name,
            )


def check_same_length(**arrays: Any) -> int:
    """Check that all the named arrays have the same length and return it."""
    lengths = {name: len(arr) for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise InputError(f"expected arrays of the same length, got: {desc}")
    return next(iter(lengths.values()))


def check_probability_vector(value: Any, name: str, *, atol: float = 1e-6) -> np.ndarray:
    """A non-negative 1-D vector summing to 1 (within ``atol``)."""
    arr = as_float_array(value, name, ndim=1)
    if (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise InputError(
            f"{name}: expected non-negative entries, got {arr[i]:g} at index {i}", argument=name
        )
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise InputError(
            f"{name}: expected entries summing to 1, got sum {total:.10g}", argument=name
        )
    return arr


def check_row_stochastic(value: Any, name: str, *, atol: float = 1e-6) -> np.ndarray:
    """An array whose last axis holds probability distributions (non-negative, summing to 1)."""
    arr = as_float_array(value, name)
    if arr.ndim < 2:
        raise InputError.bad(
            name, "an array of at least 2 dimensions with rows on the last axis", arr
        )
    if (arr < 0).any():
        where = tuple(int(i) for i in np.argwhere(arr < 0)[0])
        raise InputError(
            f"{name}: expected non-negative entries, got {arr[where]:g} at index {where}",
            argument=name,
        )
    sums = arr.sum(axis=-1)
    off = np.abs(sums - 1.0) > atol
    if off.any():
        where = tuple(int(i) for i in np.argwhere(off)[0])
        raise InputError(
            f"{name}: expected rows summing to 1, got a row at index {where} summing to "
            f"{sums[where]:.10g}",
            argument=name,
        )
    return arr


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError.bad(name, f"an integer >= {minimum}", value)
    return int(value)


def check_in_range(
    value: Any,
    name: str,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    # float() reads True as 1.0 and "0.5" as 0.5: a bool or a string is not a number here
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise InputError.bad(name, "a number", value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a number", value) from None
    ok = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
    if not ok or x != x:
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        raise InputError.bad(name, f"a number in {lb}{low:g}, {high:g}{rb}", value)
    return x


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InputError.bad(name, "one of " + ", ".join(repr(c) for c in choices), value)
    return value


def check_positive(value: Any, name: str) -> float:
    """A finite number > 0 (as a float)."""
    return check_in_range(value, name, 0.0, math.inf, low_open=True, high_open=True)


def check_non_negative(value: Any, name: str) -> float:
    """A finite number >= 0 (as a float)."""
    return check_in_range(value, name, 0.0, math.inf, high_open=True)


def check_probability(value: Any, name: str, *, open_ends: bool = True) -> float:
    """A number in (0, 1) (or [0, 1] with ``open_ends=False``)."""
    return check_in_range(value, name, 0.0, 1.0, low_open=open_ends, high_open=open_ends)


def check_n_jobs(n_jobs: Any, name: str = "n_jobs") -> int:
    """joblib's rule: None means 1, a positive count, or -1 for every core (-2: all but one ...).

    Returns the number of workers to use on this machine.
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InputError.bad(name, "None or a non-zero integer (-1: every core)", n_jobs)
    if n_jobs > 0:
        return int(n_jobs)
    cores = os.cpu_count() or 1
    return max(cores + 1 + int(n_jobs), 1)


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError.bad(name, "True or False", value)
    return bool(value)


def check_string(value: Any, name: str, *, allow_none: bool = False) -> str | None:
    """A non-empty string (or None when ``allow_none``)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value.strip():
        expected = "a non-empty string or None" if allow_none else "a non-empty string"
        raise InputError.bad(name, expected, value)
    return value


def repeated(values: Any) -> list:
    """The values that occur more than once in ``values``, each once, sorted (what an error
    about a list that must not repeat itself names)."""
    seen: set = set()
    twice: set = set()
    for value in values:
        (twice if value in seen else seen).add(value)
    return sorted(twice)


class RepeatedKeyError(ValueError):
    """A JSON object lists one key twice (the message names it)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=unique_keys)``: an object that lists a key twice raises
    :class:`RepeatedKeyError` (a ``ValueError``); json alone keeps the last value, unseen."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKeyError(f"expected each key once in an object, got {key!r} twice")
        out[key] = value
    return out


def check_string_list(value: Any, name: str, *, what: str = "strings") -> list[str]:
    """A non-empty sequence of strings (a list, tuple or 1-D array) as a list; ``what`` names
    the items in the message ("request strings")."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InputError.bad(name, f"a sequence of {what}", value)
    items = list(value.tolist() if hasattr(value, "tolist") else value)
    if not items:
        raise InputError.bad(name, f"at least one of the {what}", value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InputError.bad(f"{name}[{i}]", "a string", item)
    return items


def check_callable(value: Any, name: str) -> Any:
    if not callable(value):
        raise InputError.bad(name, "a callable", value)
    return value


def check_existing_file(path: Any, name: str) -> Path:
    """The path of an existing file (a str or PathLike)."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError.bad(name, "a file path", path)
    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing file", str(path))
    return path


def check_class_indices(values: Any, name: str, num_classes: int | None = None) -> np.ndarray:
    """Integer class indices 0..K-1 as an int64 array (K = ``num_classes`` when given)."""
    arr = as_1d(values, name)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    classes = "0..K-1" if num_classes is None else f"0..{num_classes - 1}"
    if arr.dtype.kind not in "iu":
        raise InputError.bad(name, f"integer class indices {classes}", arr)
    if (arr < 0).any():
        raise InputError.bad(name, f"class indices {classes}", f"index {arr.min()}")
    if num_classes is not None and arr.max() >= num_classes:
        raise InputError.bad(name, f"class indices 0..{num_classes - 1}", f"index {arr.max()}")
    return arr.astype(np.int64, copy=False)


def check_device(device: Any, name: str = "device") -> str:
    """A torch device name: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``."""
    if not isinstance(device, str) or not (
        device in ("auto", "cpu", "cuda") or (device.startswith("cuda:") and device[5:].isdigit())
    ):
        raise InputError.bad(name, '"auto", "cpu", "cuda" or "cuda:N"', device)
    return device


def resolve_device(torch: Any, device: Any, name: str = "device") -> str:
    """``device`` checked and resolved: ``"auto"`` is CUDA when torch sees a GPU, else the CPU; a
    CUDA device that torch does not see is a :class:`ConfigError` naming ``name``."""
    device = check_device(device, name)
    available = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if available else "cpu"
    if device.startswith("cuda"):
        count = torch.cuda.device_count() if available else 0
        index = int(device[5:]) if ":" in device else 0
        if index >= count:
            raise ConfigError(
                f"{name}: {device!r} was asked for, but torch sees "
                + (f"{count} GPU(s)" if count else "no GPU (torch.cuda.is_available() is False)")
            )
    return device


def npy_reason(exc: BaseException) -> str:
    """Why ``np.load(..., allow_pickle=False)`` could not read a file, for a user: numpy's
    "contains pickled (object) data. If you trust the file you can load it unsafely using the
    `allow_pickle=` keyword argument" is what it says of any file without a NumPy header (a CSV
    named .npy, random bytes), and nothing trustlab takes can do what it suggests."""
    if isinstance(exc, EOFError):
        return "the file is empty or cut short"
    text = str(exc)
    if "contains pickled (object) data" in text:
        return "it is not a NumPy .npy/.npz file (it lacks the NumPy header; pickles are not read)"
    if "Object arrays cannot be loaded" in text:
        return "it holds Python objects (an object array), not numbers; pickles are not read"
    return text


def shown_url(url: str) -> str:
    """``url`` as a message may show it: ``user:password@``, query and fragment as ``***``; scheme,
    host and path kept. An unparseable URL (a password with an unescaped '/', '?' or '#') is hidden
    up to its last '@', and its query after that. A query's '@' is no userinfo (the host stays), but
    a port before it is hidden: it may be a password's digits ('user:1234?pw@host')."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port  # ValueError: a port that is no number or out of range
    except ValueError:  # or an unclosed '['
        parts, port = None, None
    if unparsed := parts is None or "@" in parts.path:
        url = re.sub(r"//.*@", "//***@", url, flags=re.DOTALL)
    at = url.rfind("@") + 1 if unparsed else 0  # the query is looked for after the host
    cut = min((i for i in (url.find("?", at), url.find("#", at)) if i >= 0), default=len(url))
    head, tail = re.sub(r"//.*@", "//***@", url[:cut], flags=re.DOTALL), url[cut:]
    if not unparsed and "@" in tail and port is not None and "@" not in parts.netloc:
        head = re.sub(r"^(.*//[^/]*):[0-9]+", r"\1:***", head, flags=re.DOTALL)
    return head + (tail[:1] + "***" if tail else "")

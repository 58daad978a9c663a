"""Checks of the market's inputs, shared by the mechanism (``market``) and the learners."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from scipy.sparse import issparse

from trustlab._checks import as_1d, as_float_array, check_finite_rows
from trustlab.errors import InputError, describe

__all__ = [
    "MIN_HELD_OUT",
    "check_learner_features",
    "check_binary_target",
    "check_weights",
    "check_intercept",
    "check_features",
    "check_budgets",
    "check_feature_names",
    "check_positive_labels",
    "check_price",
    "check_price_vector",
    "market_distances",
    "weight_norm",
    "align_to_columns",
    "refuse_overflow",
    "refuse_text",
    "feature_names",
    "validate",
]

# The learners hold out validation users only when each side of the split has this many.
MIN_HELD_OUT = 10
# Below this ||w||, ||w||^2 (under 1e-300) may be subnormal and imprecise: rescale w first.
_NORMAL_NORM = 1e-150


class _NotNumbers(InputError, TypeError):
    """Values that are not numbers: an InputError, and a TypeError as numpy's own conversion
    error is (scikit-learn's checks expect that type)."""

    def __init__(self, message: str, argument: str):
        super().__init__(message, argument=argument)


def check_learner_features(X: Any, estimator: str, n_features: int | None = None) -> np.ndarray:
    """The learners' ``X``: a dense, finite, 2-D float array with ``n_features`` columns when
    given. Refusals carry the words scikit-learn's estimator checks look for ("sparse",
    "Complex data not supported", "Reshape your data", "NaN", "inf", "0 feature(s)", "X has 1
    features, but ... is expecting 2 features as input")."""
    if issparse(X):
        raise InputError(
            "X: expected a dense array, got a scipy sparse matrix (sparse input is not "
            "supported; convert it with .toarray())",
            argument="X",
        )
    raw = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    refuse_text(raw, "X")
    if np.iscomplexobj(raw):
        raise InputError(
            "X: expected real numbers, got complex numbers (Complex data not supported)",
            argument="X",
        )
    try:
        features = raw.astype(np.float64)
    except TypeError as error:  # a dict, say: numpy's TypeError, kept a TypeError
        raise _NotNumbers(
            f"X: expected numbers, got a value that is not a number ({error})", "X"
        ) from None
    except ValueError as error:  # text
        raise InputError(f"X: expected numbers, got text ({error})", argument="X") from None
    if features.ndim != 2:
        raise InputError(
            f"X: expected a 2-dimensional array, got {describe(features)}. Reshape your data "
            "with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single row",
            argument="X",
        )
    rows, columns = features.shape
    if rows == 0 or columns == 0:
        kind = "sample" if rows == 0 else "feature"
        raise InputError(
            f"X: found array with 0 {kind}(s) (shape={features.shape}) while a minimum of 1 "
            f"is required by {estimator}.",
            argument="X",
        )
    check_finite_rows(features, "X")
    if n_features is not None and columns != n_features:
        raise InputError(
            f"X: expected {n_features} column(s), got {columns} (X has {columns} features, but "
            f"{estimator} is expecting {n_features} features as input)",
            argument="X",
        )
    return features


def check_binary_target(y: Any, n_rows: int, estimator: str) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, classes)`` for a learner: one label per row of X, exactly two classes. A column
    vector is flattened with scikit-learn's DataConversionWarning; refusals use the words its
    estimator checks look for."""
    from sklearn.exceptions import DataConversionWarning
    from sklearn.utils.multiclass import type_of_target

    if y is None:
        raise InputError(
            f"y: {estimator} requires y to be passed, but the target y is None", argument="y"
        )
    raw = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if raw.ndim == 2 and raw.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=4,
        )
    labels = as_1d(raw, "y")
    if labels.shape[0] != n_rows:
        raise InputError.bad("y", f"{n_rows} labels (one per row of X)", labels)
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise InputError("y: expected finite class labels, got infinite values", argument="y")
    # labels in an object array (ints, say) are typed by their values
    kind = type_of_target(np.asarray(labels.tolist()) if labels.dtype == object else labels)
    classes = np.unique(labels)
    if classes.size != 2:
        found = f"a target of type {kind!r} (Unknown label type: {kind})"
        if kind != "continuous":
            shown = ", ".join(map(repr, classes[:5].tolist())) + (
                ", ..." if classes.size > 5 else ""
            )
            found = f"{classes.size} class{'es' if classes.size > 1 else ''} ({shown})"
        raise InputError(
            f"y: expected two classes, got {found}. Only binary classification is supported.",
            argument="y",
        )
    return labels, classes


def refuse_text(values: Any, name: str, expected: str = "numbers") -> None:
    """Text where numbers are expected is refused naming ``name``, as ``b0`` and ``price``
    refuse it (numpy would read ``"1.5"`` as 1.5 in an array but not as a scalar)."""
    raw = values.to_numpy() if hasattr(values, "to_numpy") else values
    try:
        array = np.asarray(raw)
    except (TypeError, ValueError):  # ragged: the array check refuses it
        return
    if array.dtype.kind not in "OUS":  # numbers (or bool): nothing to look at
        return
    for i, value in enumerate(array.ravel()):
        if isinstance(value, (str, bytes)):  # numpy's str_ and bytes_ too
            where = ""
            if array.ndim == 1:
                where = f" at index {i}"
            elif array.ndim == 2:
                where = f" at row {i // array.shape[1]}, column {i % array.shape[1]}"
            raise InputError(
                f"{name}: expected {expected}, got text ({str(value)!r}{where})", argument=name
            )


def check_weights(w: Any) -> np.ndarray:
    refuse_text(w, "w")
    weights = as_float_array(w, "w", ndim=1)
    if not np.any(weights != 0.0):
        raise InputError.bad("w", "a non-zero weight vector", weights)
    return weights


def _number(value: Any) -> float:
    """``value`` as a float when it is a real number (a bool or a string is not: ``float`` would
    read True as 1 and "1" as 1); NaN otherwise, which every caller refuses."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def check_intercept(b0: Any) -> float:
    value = _number(b0)
    if not math.isfinite(value):
        raise InputError.bad("b0", "a finite number (the intercept)", b0)
    return value


def check_features(X: Any, n_features: int | None = None) -> np.ndarray:
    """A 2-D float array (a DataFrame is fine) with ``n_features`` columns when given."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    refuse_text(X, "X")
    features = as_float_array(X, "X", ndim=2)
    if n_features is not None and features.shape[1] != n_features:
        raise InputError.bad(
            "X", f"{n_features} column(s), one per entry of w, in a 2-D array", features
        )
    return features


def feature_names(X: Any) -> list[str] | None:
    """The column names of a DataFrame ``X``; None for arrays."""
    columns = getattr(X, "columns", None)
    return None if columns is None else [str(c) for c in columns]


def check_feature_names(estimator: Any, X: Any, *, reset: bool) -> None:
    """scikit-learn's convention for a DataFrame's column names: ``reset`` (fit) sets
    ``feature_names_in_`` when every name is a string (and removes it otherwise); at prediction
    other names are refused, and names missing on one side only give scikit-learn's warning."""
    columns = getattr(X, "columns", None)
    names = None
    if columns is not None and len(columns) and all(isinstance(c, str) for c in columns):
        names = np.asarray(list(columns), dtype=object)
    fitted = getattr(estimator, "feature_names_in_", None)
    kind = type(estimator).__name__
    if reset:
        if names is not None:
            estimator.feature_names_in_ = names
        elif fitted is not None:
            del estimator.feature_names_in_
    elif (names is None) != (fitted is None):  # the caller's predict -> _check_predict_X -> here
        has = "has feature names" if fitted is None else "does not have valid feature names"
        but = "without" if fitted is None else "with"
        warnings.warn(f"X {has}, but {kind} was fitted {but} feature names", stacklevel=4)
    elif names is not None and list(names) != list(fitted):
        raise InputError(
            f"X: expected the feature names seen at fit, {list(fitted)}, got {list(names)} "
            "(The feature names should match those that were passed during fit.)",
            argument="X",
        )


def check_budgets(budgets: Any, n_users: int, name: str = "budgets") -> np.ndarray:
    if hasattr(budgets, "to_numpy"):
        budgets = budgets.to_numpy()
    refuse_text(budgets, name)
    values = as_float_array(budgets, name, ndim=1)
    if values.shape[0] != n_users:
        raise InputError.bad(name, f"{n_users} values (one per row of X)", values)
    if (values < 0).any():
        i = int(np.argmax(values < 0))
        raise InputError(
            f"{name}: expected non-negative budgets, got {values[i]:g} at index {i}",
            argument=name,
        )
    return values


def check_positive_labels(y: Any, n_users: int) -> np.ndarray:
    """Binary labels (0/1, -1/+1 or bool) as a boolean 'positive' mask."""
    refuse_text(y, "y", "binary labels in {0, 1} or {-1, +1} (numbers or bool)")
    labels = as_1d(y, "y")
    if labels.shape[0] != n_users:
        raise InputError.bad("y", f"{n_users} labels (one per row of X)", labels)
    if labels.dtype.kind == "b":
        return labels.astype(bool)
    try:
        numeric = labels.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError.bad("y", "binary labels in {0, 1} or {-1, +1}", labels) from None
    values = set(np.unique(numeric).tolist())
    if not (values <= {0.0, 1.0} or values <= {-1.0, 1.0}):
        raise InputError.bad("y", "binary labels in {0, 1} or {-1, +1}", sorted(values)[:5])
    return numeric == 1.0


def check_price(price: Any, name: str = "price") -> float:
    """A non-negative price; ``inf`` means no market."""
    value = _number(price)
    if not value >= 0.0:  # also rejects NaN (and a bool or a string)
        raise InputError.bad(name, "a non-negative number (inf for no market)", price)
    return value + 0.0  # -0.0 is 0.0 (it would print as a price of '-0')


def align_to_columns(values: Any, X: Any, name: str) -> Any:
    """Per-feature ``values`` (``w``, ``prices``) given as a pandas Series indexed by the names of
    a DataFrame ``X``'s columns, put in the columns' order (positions would silently pair a
    weight with another feature); names that are not the columns are refused."""
    index = values.index if hasattr(values, "to_numpy") else None  # a list's .index is a method
    columns = getattr(X, "columns", None)
    if index is None or columns is None or list(index) == list(columns):
        return values
    if len(index) == len(columns) and set(index) == set(columns):
        return values.reindex(columns)
    if any(isinstance(label, str) for label in index):
        raise InputError(
            f"{name}: expected values indexed by the columns of X, {list(columns)}, got a "
            f"Series indexed {list(index)}",
            argument=name,
        )
    return values  # a positional index (0, 1, ...): by position, as an array


def validate(w, b0, X, budgets, y=None):
    """The market's inputs, checked: (weights, intercept, features, budgets, positive or None)."""
    weights = check_weights(align_to_columns(w, X, "w"))
    intercept = check_intercept(b0)
    features = check_features(X, weights.shape[0])
    money = check_budgets(budgets, features.shape[0])
    positive = None if y is None else check_positive_labels(y, features.shape[0])
    return weights, intercept, features, money, positive


def check_price_vector(prices: Any, n_features: int) -> np.ndarray:
    """Per-feature prices: non-negative, ``inf`` for a feature that is not for sale (as
    ``MarketResult.feature_prices`` reports them when no market forms)."""
    refuse_text(prices, "prices")
    raw = np.asarray(prices) if not hasattr(prices, "to_numpy") else prices.to_numpy()
    offered = raw
    if raw.dtype.kind == "f":
        if np.isnan(raw).any() or (raw == -np.inf).any():
            raise InputError.bad(
                "prices", "non-negative per-feature prices (inf: not for sale), no NaN", raw
            )
        offered = np.where(raw == np.inf, 0.0, raw)
    vector = as_float_array(offered, "prices", ndim=1)  # text, complex, shape
    if vector.shape[0] != n_features:
        raise InputError.bad("prices", f"{n_features} per-feature prices", vector)
    if (vector < 0).any():
        raise InputError.bad(
            "prices", "non-negative per-feature prices (inf: not for sale)", vector
        )
    if raw.dtype.kind == "f":
        vector[raw == np.inf] = np.inf
    return vector


def refuse_overflow(name: str, what: str, remedy: str) -> None:
    raise InputError(
        f"{name}: expected values whose {what} fit in a float64 (at most 1.8e308), got an "
        f"overflow to infinity; {remedy}",
        argument=name,
    )


def weight_norm(weights: np.ndarray) -> float:
    """``||w||`` of non-zero weights, exact at any scale of ``w``; an overflow is refused."""
    with np.errstate(over="ignore", invalid="ignore"):
        norm = float(np.linalg.norm(weights))
        # ||w||^2 overflowed (||w|| may not: w = [1e300]) or fell below the normal floats
        # (2.2e-308: subnormal squares keep few bits, w = [1.585e-162] gave ||w|| 29% off, or
        # 0): scale by max |w_j| first
        if not _NORMAL_NORM <= norm < math.inf:
            scale = float(np.abs(weights).max())
            norm = scale * float(np.linalg.norm(weights / scale))
    if not math.isfinite(norm):
        refuse_overflow(
            "w", "norm ||w||", "divide w and b0 by a constant (the classifier is the same)"
        )
    return norm


def market_distances(weights, intercept, features) -> tuple[float, np.ndarray]:
    """``(||w||, u)`` with ``u_i = -(w'x_i + b0)/||w||``; an overflow is refused, not returned as
    inf or NaN (which would silently accept or drop users)."""
    norm = weight_norm(weights)
    with np.errstate(over="ignore", invalid="ignore"):
        distances = -(features @ weights + intercept) / norm
    if not np.isfinite(distances).all():
        refuse_overflow("X", "scores w'x + b0", "use smaller units for the features")
    return norm, distances

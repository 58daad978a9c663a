"""Checks of the market's inputs, shared by the mechanism (``market``) and the learners."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from trustlab._checks import as_1d, as_float_array
from trustlab.errors import InputError

__all__ = [
    "check_weights",
    "check_intercept",
    "check_features",
    "check_budgets",
    "check_positive_labels",
    "check_price",
    "feature_names",
    "validate",
]


def check_weights(w: Any) -> np.ndarray:
    weights = as_float_array(w, "w", ndim=1)
    if not np.any(weights != 0.0):
        raise InputError.bad("w", "a non-zero weight vector", weights)
    return weights


def check_intercept(b0: Any) -> float:
    try:
        value = float(b0)
    except (TypeError, ValueError):
        raise InputError.bad("b0", "a finite number (the intercept)", b0) from None
    if not math.isfinite(value):
        raise InputError.bad("b0", "a finite number (the intercept)", b0)
    return value


def check_features(X: Any, n_features: int | None = None) -> np.ndarray:
    """A 2-D float array (a DataFrame is fine) with ``n_features`` columns when given."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
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


def check_budgets(budgets: Any, n_users: int, name: str = "budgets") -> np.ndarray:
    if hasattr(budgets, "to_numpy"):
        budgets = budgets.to_numpy()
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
    try:
        value = float(price)
    except (TypeError, ValueError):
        raise InputError.bad(name, "a non-negative number (inf for no market)", price) from None
    if not value >= 0.0:  # also rejects NaN
        raise InputError.bad(name, "a non-negative number (inf for no market)", price)
    return value


def validate(w, b0, X, budgets, y=None):
    """The market's inputs, checked: (weights, intercept, features, budgets, positive or None)."""
    weights = check_weights(w)
    intercept = check_intercept(b0)
    features = check_features(X, weights.shape[0])
    money = check_budgets(budgets, features.shape[0])
    positive = None if y is None else check_positive_labels(y, features.shape[0])
    return weights, intercept, features, money, positive

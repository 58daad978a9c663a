"""ANOVA-TPNN's target: the task it implies, its encoding, the validation split, the start.

Regression targets are standardised for training (the scale is folded back afterwards);
class labels become codes 0..K-1 (binary: one logit, multiclass: one per class).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from trustlab._checks import as_1d
from trustlab._numerics import power_of_2, standardised
from trustlab.errors import InputError

__all__ = [
    "MAX_AUTO_CLASSES",
    "MIN_VALIDATION_ROWS",
    "MIN_TRAINING_ROWS",
    "guess_task",
    "encode_target",
    "validation_split",
    "as_target",
    "initial_intercept",
]

MAX_AUTO_CLASSES = 20  # task="auto": integer targets with more distinct values are regression
MIN_VALIDATION_ROWS = 10
MIN_TRAINING_ROWS = 20


def guess_task(target: np.ndarray) -> str:
    """Classification for labels (strings, booleans, or integer values with at most
    MAX_AUTO_CLASSES distinct ones), regression for other numbers."""
    if target.dtype.kind not in "iuf":
        return "classification"
    values = target.astype(np.float64)
    if np.all(values == np.round(values)) and len(np.unique(values)) <= MAX_AUTO_CLASSES:
        return "classification"
    return "regression"


def encode_target(
    target: np.ndarray, task: str
) -> tuple[str, np.ndarray, np.ndarray | None, float, float]:
    """``(loss task, encoded target, classes, shift, scale)``: the loss task is "regression",
    "binary" or "multiclass"; a regression target is encoded as ``(y - shift) / scale``."""
    from sklearn.utils.multiclass import type_of_target

    if task == "auto":
        task = guess_task(target)
    if task == "regression":
        try:
            values = np.asarray(target, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError.bad("y", "numbers for regression", target) from None
        if not np.isfinite(values).all():
            raise InputError.bad("y", "finite, non-constant numbers for regression", target)
        # on y divided by a power of 2 near its largest magnitude (exact): squares of values
        # past ~1e154 overflowed (scale inf, a model predicting NaN), below ~1e-154 vanished
        size = float(power_of_2(np.abs(values).max()))
        shift = float((values / size).mean()) * size
        scale = float((values / size).std()) * size
        if scale == 0:
            raise InputError.bad("y", "finite, non-constant numbers for regression", target)
        return "regression", standardised(values, shift, scale), None, shift, scale
    if target.dtype.kind == "f" and not np.isfinite(target).all():
        raise InputError("y: expected finite class labels, got infinite values", argument="y")
    # labels in an object array (ints, say) are typed by their values, as in a typed array
    kind = type_of_target(np.asarray(target.tolist()) if target.dtype == object else target)
    if kind not in ("binary", "multiclass"):
        raise InputError(
            "y: expected class labels for classification (task='classification'), got a target "
            f"of type {kind!r} (Unknown label type: {kind})",
            argument="y",
        )
    try:
        classes, encoded = np.unique(target, return_inverse=True)
    except TypeError:  # labels that cannot be ordered: 1 and "a" in one object array
        kinds = sorted({type(v).__name__ for v in target.tolist()})
        raise InputError(
            f"y: expected class labels of one type, got a mix of {', '.join(kinds)} (Mix of "
            "label input types (string and number))",
            argument="y",
        ) from None
    if len(classes) < 2:
        only = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        raise InputError(f"y: expected at least 2 classes, got only {only!r}", argument="y")
    task = "binary" if len(classes) == 2 else "multiclass"
    return task, encoded, classes, 0.0, 1.0


def validation_split(
    n: int, fraction: float, labels: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation row indices (stratified by ``labels`` when it can be).

    The small-data fallback: when the split would hold fewer than MIN_VALIDATION_ROWS validation
    or MIN_TRAINING_ROWS training rows (fewer than 61 rows at the default fraction 0.15), or a
    class has a single row, no rows are held out: both index arrays are every row, so early
    stopping and the learning-rate cuts follow the loss on the training rows.
    """
    from sklearn.model_selection import train_test_split

    n_valid = math.ceil(fraction * n)
    too_small = n_valid < MIN_VALIDATION_ROWS or n - n_valid < MIN_TRAINING_ROWS
    if too_small or (labels is not None and np.bincount(labels).min() < 2):
        every = np.arange(n)
        return every, every
    seed = int(rng.integers(2**31 - 1))
    try:
        return train_test_split(np.arange(n), test_size=n_valid, random_state=seed, stratify=labels)
    except ValueError:  # too few rows of a class for a stratified split of this size
        return train_test_split(np.arange(n), test_size=n_valid, random_state=seed)


def as_target(y: Any, estimator: str) -> np.ndarray:
    """``y`` as a 1-D array; None is refused and a column vector is flattened with scikit-learn's
    DataConversionWarning."""
    if y is None:
        raise InputError(
            f"y: {estimator} requires y to be passed, but the target y is None", argument="y"
        )
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
    return as_1d(y, "y")


def initial_intercept(encoded: np.ndarray, task: str, n_outputs: int) -> np.ndarray:
    """The intercept training starts from: 0 (regression) or the class log-priors."""
    if task == "regression":
        return np.zeros(1)
    counts = np.bincount(encoded, minlength=max(2, n_outputs)).astype(float)
    prior = counts / counts.sum()
    if task == "binary":
        return np.array([math.log(prior[1] / prior[0])])
    return np.log(np.maximum(prior, 1e-12))

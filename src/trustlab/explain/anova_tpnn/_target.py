"""ANOVA-TPNN's target: the task it implies, its encoding, the validation split, the start.

Regression targets are standardised for training (the scale is folded back afterwards);
class labels become codes 0..K-1 (binary: one logit, multiclass: one per class).
"""

from __future__ import annotations

import math

import numpy as np

from trustlab.errors import InputError

__all__ = [
    "MAX_AUTO_CLASSES",
    "MIN_VALIDATION_ROWS",
    "MIN_TRAINING_ROWS",
    "guess_task",
    "encode_target",
    "validation_split",
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

    kind = type_of_target(target)
    if task == "auto":
        task = guess_task(target)
    if task == "regression":
        try:
            values = np.asarray(target, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError.bad("y", "numbers for regression", target) from None
        if not np.isfinite(values).all() or values.std() == 0:
            raise InputError.bad("y", "finite, non-constant numbers for regression", target)
        shift, scale = float(values.mean()), float(values.std())
        return "regression", (values - shift) / scale, None, shift, scale
    if kind not in ("binary", "multiclass"):
        raise InputError.bad(
            "y",
            "class labels for classification (task='classification')",
            f"a target of type {kind!r}",
        )
    classes, encoded = np.unique(target, return_inverse=True)
    if len(classes) < 2:
        raise InputError.bad("y", "at least 2 classes", f"only {classes[0]!r}")
    task = "binary" if len(classes) == 2 else "multiclass"
    return task, encoded, classes, 0.0, 1.0


def validation_split(
    n: int, fraction: float, labels: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation row indices (stratified by ``labels`` when it can be)."""
    from sklearn.model_selection import train_test_split

    n_valid = math.ceil(fraction * n)
    if n_valid < MIN_VALIDATION_ROWS or n - n_valid < MIN_TRAINING_ROWS:
        need = max(
            math.ceil(MIN_VALIDATION_ROWS / fraction),
            MIN_VALIDATION_ROWS + MIN_TRAINING_ROWS,
        )
        raise InputError(
            f"X: expected at least {need} rows, so that the validation split "
            f"(validation_fraction={fraction}) holds {MIN_VALIDATION_ROWS} "
            f"rows and training {MIN_TRAINING_ROWS}, got {n} rows",
            argument="X",
        )
    if labels is not None:
        counts = np.bincount(labels)
        if counts.min() < 2:
            raise InputError.bad(
                "y",
                "at least 2 rows of each class (for the stratified validation split)",
                f"{int(counts.min())} row(s) of a class",
            )
    seed = int(rng.integers(2**31 - 1))
    try:
        return train_test_split(np.arange(n), test_size=n_valid, random_state=seed, stratify=labels)
    except ValueError:  # too few rows of a class for a stratified split of this size
        return train_test_split(np.arange(n), test_size=n_valid, random_state=seed)


def initial_intercept(encoded: np.ndarray, task: str, n_outputs: int) -> np.ndarray:
    """The intercept training starts from: 0 (regression) or the class log-priors."""
    if task == "regression":
        return np.zeros(1)
    counts = np.bincount(encoded, minlength=max(2, n_outputs)).astype(float)
    prior = counts / counts.sum()
    if task == "binary":
        return np.array([math.log(prior[1] / prior[0])])
    return np.log(np.maximum(prior, 1e-12))

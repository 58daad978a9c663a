"""Checks of :class:`~trustlab.safety.SafetyPolytope`'s inputs: activations, labels, categories,
and the arrays a saved polytope is loaded from.

Every refusal of an argument is an :class:`~trustlab.errors.InputError` naming it (saved
arrays that are not what ``save`` wrote: a :class:`~trustlab.errors.ResourceError`). Where
scikit-learn's estimator checks look for particular words, the message carries them as well
("sparse", "Complex data not supported", "Reshape your data", "NaN", "inf", "0 feature(s)",
"X has 1 features, but SafetyPolytope is expecting 2 features as input", "only one class",
"Unknown label type: continuous", "requires y to be passed").
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from trustlab._checks import as_1d, check_rows
from trustlab.errors import InputError, ResourceError, describe

__all__ = [
    "CLASSES",
    "check_activations",
    "as_unsafe_labels",
    "as_categories",
    "check_saved_arrays",
]

ESTIMATOR = "SafetyPolytope"
# The labels, in scikit-learn's order: 0 safe, 1 unsafe (the positive class, ``classes_[1]``).
CLASSES = np.array([0, 1], dtype=np.int64)


def check_activations(
    acts: Any, name: str = "acts", *, n_features: int | None = None, one_row: bool = False
) -> np.ndarray:
    """Activations as a dense, finite float64 array of shape (n, d) with n, d >= 1
    (:func:`trustlab._checks.check_rows`).

    ``n_features``: the width the fitted polytope reads (None while fitting). ``one_row``: a 1-D
    vector is one state (the detection and correction methods); otherwise it is refused, as
    scikit-learn's ``predict`` and ``decision_function`` refuse it.
    """
    _refuse_text(acts, name)
    return check_rows(acts, name, estimator=ESTIMATOR, n_features=n_features, one_row=one_row,
                      what="activations")  # fmt: skip


def _refuse_text(acts: Any, name: str) -> None:
    """Text is refused although numpy reads "1.5" as 1.5 (the polytope takes no strings: its
    tags say so); numbers in an object array stay accepted, as scikit-learn's checks want."""
    try:
        array = np.asarray(acts.to_numpy() if hasattr(acts, "to_numpy") else acts)
    except (TypeError, ValueError):  # ragged rows: check_rows refuses them
        return
    if array.dtype.kind not in "OUS":
        return
    flat = array.ravel()
    i = next((i for i, value in enumerate(flat) if isinstance(value, (str, bytes))), None)
    if i is None:
        return
    where = f" at index {i}" if array.ndim == 1 else ""
    if array.ndim == 2:
        where = f" at row {i // array.shape[1]}, column {i % array.shape[1]}"
    raise InputError(f"{name}: expected numbers, got text ({str(flat[i])!r}{where})", argument=name)


def as_unsafe_labels(unsafe: Any, n: int) -> np.ndarray:
    """The labels as a boolean mask (True = unsafe): 0/1 or booleans, one per row, both present.

    Other pairs of labels ({1, 2}, {-1, 1}, text) are refused rather than ordered as
    scikit-learn orders classes: with {1, 2} that order would call 1 safe, while 1 means unsafe
    here. A column vector is flattened with scikit-learn's DataConversionWarning.
    """
    from sklearn.exceptions import DataConversionWarning

    if unsafe is None:
        raise InputError(
            f"unsafe: expected one label per row of acts (1 = unsafe, 0 = safe), got None "
            f"({ESTIMATOR} requires y to be passed, but the target y is None)",
            argument="unsafe",
        )
    raw = np.asarray(unsafe.to_numpy() if hasattr(unsafe, "to_numpy") else unsafe)
    if raw.ndim == 2 and raw.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=4,
        )
    labels = as_1d(raw, "unsafe")
    if len(labels) != n:
        raise InputError.bad("unsafe", f"{n} labels (one per row of acts)", labels)
    values = _distinct(labels)
    if not values <= {0, 1}:  # True and False compare equal to 1 and 0
        shown = sorted(values, key=str)
        raise InputError(
            f"unsafe: expected 0/1 or boolean labels (1 = unsafe), got {describe(shown[:5])}"
            f"{_label_type(labels)}; other pairs of labels are refused, since which of them "
            "means unsafe would be a guess",
            argument="unsafe",
        )
    mask = labels.astype(bool)
    for present, label, side in ((mask.any(), 1, "unsafe"), (not mask.all(), 0, "safe")):
        if not present:
            other = "safe" if side == "unsafe" else "unsafe"
            raise InputError(
                f"unsafe: expected at least one {side} example (label {label}), got none: only "
                f"one class ({other}) is present",
                argument="unsafe",
            )
    return mask


def _distinct(labels: np.ndarray) -> set:
    try:
        return set(np.unique(labels).tolist())
    except TypeError:  # an object array of values that do not compare
        return set(labels.tolist())


def _label_type(labels: np.ndarray) -> str:
    """scikit-learn's words for labels that are not two classes ("Unknown label type: ...",
    "Only binary classification is supported.")."""
    from sklearn.utils.multiclass import type_of_target

    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        return " (infinite values)"
    try:  # labels in an object array are typed by their values
        kind = type_of_target(np.asarray(labels.tolist()) if labels.dtype == object else labels)
    except ValueError:
        kind = "unknown"
    if kind == "binary":
        return ""
    if kind == "multiclass":
        return " (more than two classes. Only binary classification is supported.)"
    return f" (Unknown label type: {kind})"


def as_categories(categories: Any, n: int) -> np.ndarray:
    """One category (text) per row of acts."""
    cats = as_1d(categories, "categories")
    if len(cats) != n:
        raise InputError.bad("categories", f"{n} categories (one per row of acts)", cats)
    return cats.astype(str)


def check_saved_arrays(arrays: dict[str, np.ndarray], d: int, path: Any) -> None:
    """The arrays :meth:`SafetyPolytope.load` read from ``path``: the shapes ``save`` writes, all
    finite (a NaN facet flags nothing: every state would be safe), a linear polytope's normals
    as wide as its activations and a positive scale (0 made every state inf, all flagged); a
    ResourceError otherwise."""
    normals = arrays["normals"]
    k, m = normals.shape if normals.ndim == 2 and normals.size else (None, None)
    concept = "encoder_weight" in arrays
    shapes = {"normals": (k, m if concept else d), "offsets": (k,), "mean": (d,), "scale": (d,)}
    if concept:
        shapes.update(encoder_weight=(m, d), encoder_bias=(m,))
    for name, shape in shapes.items():
        value = arrays[name]
        if value.shape != shape or value.dtype.kind not in "iuf":
            got = f"shape {value.shape} of {value.dtype}"
        elif not np.isfinite(value).all():
            got = "NaN or inf"
        else:
            got = "a value <= 0" if name == "scale" and not (value > 0).all() else ""
        if got:
            positive = " > 0" if name == "scale" else ""
            want = (
                "a non-empty 2-D array"
                if k is None
                else f"finite values{positive} of shape {shape}"
            )
            raise ResourceError(
                f"{path}: {name} is not what SafetyPolytope.save writes (expected {want}, got "
                f"{got})"
            )

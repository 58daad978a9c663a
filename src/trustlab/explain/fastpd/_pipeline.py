"""scikit-learn Pipelines ending in a tree ensemble: explained through their transform.

FastPD explains the last step (the tree model) on the rows the steps before it produce; the
features are then the transformed columns, named by the transform's ``get_feature_names_out``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab.errors import InputError
from trustlab.explain.fastpd._features import dense_rows

__all__ = ["is_pipeline", "split_pipeline", "transform_rows", "transformed_names"]


def is_pipeline(model: Any) -> bool:
    return hasattr(model, "steps") and hasattr(model, "named_steps")


def split_pipeline(model: Any) -> tuple[Any | None, Any]:
    """``(transform, last step)`` of a Pipeline (transform None for a one-step Pipeline);
    ``(None, model)`` for anything else."""
    if not is_pipeline(model):
        return None, model
    last = model.steps[-1][1]
    return (model[:-1] if len(model.steps) > 1 else None), last


def transformed_names(transform: Any, n_columns: int) -> tuple[str, ...] | None:
    """The transform's output column names (``get_feature_names_out``), or None when it cannot
    name them."""
    try:
        names = tuple(str(n) for n in transform.get_feature_names_out())
    except Exception:  # a step without get_feature_names_out, or one that cannot name its output
        return None
    return names if len(names) == n_columns and len(set(names)) == n_columns else None


def transform_rows(transform: Any, X: Any, name: str) -> np.ndarray:
    """The rows ``X`` through the Pipeline's transform, as a dense float64 array."""
    try:
        out = transform.transform(X)
    except Exception as exc:  # scikit-learn says what it refused: keep its first line
        text = (str(exc).strip().splitlines() or [""])[0][:200]
        raise InputError(
            f"{name}: the pipeline's transform (the steps before the tree model) failed on it: "
            f"{type(exc).__name__}: {text}",
            argument=name,
        ) from None
    if hasattr(out, "toarray"):  # a sparse matrix (e.g. one-hot columns)
        out = out.toarray()
    out = dense_rows(out, name)  # a pandas frame: its pd.NA is NaN, as for rows given directly
    if hasattr(out, "to_numpy"):
        out = out.to_numpy()
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"{name}: expected the pipeline's transform to give numbers, got "
            f"{np.asarray(out).dtype} values",
            argument=name,
        ) from None
    if arr.ndim != 2:
        raise InputError.bad(name, "a transform that gives a 2-dimensional array", arr)
    return arr

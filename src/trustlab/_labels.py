"""Sorting labels of any dtype (class labels, group labels): one refusal for values that do not compare."""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab.errors import InputError

__all__ = ["sorted_unique"]


def sorted_unique(values: Any, name: str, **options: Any) -> Any:
    """``np.unique(values, **options)``; labels numpy cannot sort (numbers and text in one object
    array) are an InputError naming ``name`` and the kinds found, not numpy's raw TypeError.

    >>> sorted_unique(np.array(["b", "a", "b"]), "groups").tolist()
    ['a', 'b']
    """
    try:
        return np.unique(values, **options)
    except TypeError:
        kinds = " and ".join(
            sorted({type(v).__name__ for v in np.asarray(values, dtype=object).ravel().tolist()})
        )
        raise InputError(
            f"{name}: expected labels of one comparable type (all numbers or all text), got {kinds}",
            argument=name,
        ) from None

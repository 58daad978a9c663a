"""The per-cell unfairness function eta of DCP, its derivative and the clip that keeps it finite.

``eta(a, b)`` is the smallest fraction t such that a conditional prediction probability b can be
written as (1 - t) * a + t * q for some q in [0, 1]:

    eta(a, b) = max(1 - b / a, 1 - (1 - b) / (1 - a)),   eta(a, a) = 0.

The limits at a = 0 and a = 1 are taken explicitly so no NaN or warning ever appears:
eta(0, b) = b and eta(1, b) = 1 - b.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ENTRY_MIN", "eta", "eta_grad_a", "eta_branches", "eta_interior"]

#: Every confusion-matrix entry is kept in [ENTRY_MIN, 1 - ENTRY_MIN] (the authors' MIN_ALPHAG):
#: with b strictly inside (0, 1), eta(a, b) and its slope stay finite for every a in [0, 1].
ENTRY_MIN = 1e-5

_TINY = np.finfo(np.float64).tiny


def eta_branches(a, b) -> tuple[np.ndarray, np.ndarray]:
    """The two smooth branches ``1 - b/a`` and ``1 - (1-b)/(1-a)`` with their limits."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(a > 0, 1.0 - b / np.where(a > 0, a, 1.0), np.where(b > 0, -np.inf, 0.0))
        comp = 1.0 - a
        second = np.where(
            comp > 0, 1.0 - (1.0 - b) / np.where(comp > 0, comp, 1.0), np.where(b < 1, -np.inf, 0.0)
        )
    return first, second


def eta(a, b) -> np.ndarray:
    """eta(a, b) for broadcastable arrays a (baseline) and b (group), values in [0, 1]."""
    first, second = eta_branches(a, b)
    return np.maximum(first, second)


def eta_interior(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """eta(a, b) for a in [0, 1] and b strictly inside (0, 1) (entries clipped to ENTRY_MIN).

    ``1 - min(b/a, (1-b)/(1-a))`` equals max(1 - b/a, 1 - (1-b)/(1-a)); at a = 0 or a = 1 one
    division gives +inf, so the minimum picks the other branch and the limits come out exactly
    (eta(0, b) = b, eta(1, b) = 1 - b) with half the work of :func:`eta`.
    """
    with np.errstate(divide="ignore"):
        return 1.0 - np.minimum(b / a, (1.0 - b) / (1.0 - a))


def eta_grad_a(a, b) -> np.ndarray:
    """d eta / d a on the active branch: b / a**2 if a >= b, else -(1 - b) / (1 - a)**2."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    # floor the squares, not a itself: (1e-300) ** 2 underflows to 0 and 0 / 0 gave NaN at a = b = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        up = b / np.maximum(a * a, _TINY)
        down = -(1.0 - b) / np.maximum((1.0 - a) ** 2, _TINY)
    return np.where(a >= b, up, down)

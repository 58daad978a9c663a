"""Subset transforms over the 2^k slot subsets of a leaf, and the Shapley weight tables.

A leaf with k slots (distinct features on its root path) keeps tables indexed by k-bit masks.
P(U), the share of background rows whose failure set lies inside U, is the subset sum (zeta
transform) of the failure-set histogram; SHAP values and the Shapley interaction index are
zeta transforms of P weighted by functions of |U| (see :mod:`trustlab.explain.fastpd`).
"""

from __future__ import annotations

from math import comb

import numpy as np

__all__ = [
    "popcounts",
    "subset_sum",
    "slot_pairs",
    "shap_tables",
    "shap_slot_tables",
    "pair_tables",
    "pair_slot_tables",
]


def popcounts(width: int) -> np.ndarray:
    return np.bitwise_count(np.arange(1 << width, dtype=np.int64)).astype(np.int64)


def subset_sum(table: np.ndarray, width: int) -> None:
    """In place, for every row: t[m] <- sum of t[s] over the subsets s of the bit mask m."""
    rows = table.shape[0]
    for j in range(width):
        view = table.reshape(rows, -1, 2, 1 << j)
        view[:, :, 1, :] += view[:, :, 0, :]


def _shapley_weights(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights by |U| of the SHAP tables R' and Q = R + R' (see the package docstring).

    w(u) = u! (k-u-1)! / k! is the Shapley weight of a coalition of size u among k players;
    R(a) = sum_{U in a} w(|U|) P(U) and R'(a) = sum_{U in a} w(|U|-1) P(U).
    """
    w = np.zeros(width + 1)
    for u in range(width):
        w[u] = 1.0 / (width * comb(width - 1, u))
    w_shift = np.zeros(width + 1)
    w_shift[1:] = w[:-1]
    return w_shift, w + w_shift


def _interaction_weights(width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights of the tables T0, T1, T2 giving the Shapley interaction index of a pair.

    With w2(u) = u! (k-u-2)! / (k-1)!: SII_jk(a) = T0(a) - T1(a\\j) - T1(a\\k) + T2(a\\jk), where
    T0, T1, T2 weight P(U) by w2(|U|-2), w2(|U|-2) + w2(|U|-1), w2(|U|-2) + 2 w2(|U|-1) + w2(|U|).
    """
    w2 = np.zeros(width + 1)
    for u in range(width - 1):
        w2[u] = 1.0 / ((width - 1) * comb(width - 2, u))
    s1 = np.zeros(width + 1)
    s1[1:] = w2[:-1]
    s2 = np.zeros(width + 1)
    s2[2:] = w2[:-2]
    return s2, s2 + s1, s2 + 2 * s1 + w2


def slot_pairs(width: int) -> list[tuple[int, int]]:
    """Slot pairs (j, k), j < k, ordered by k then j: a narrower leaf's pairs are a prefix."""
    return [(j, k) for k in range(1, width) for j in range(k)]


def _zeta_weighted(prob: np.ndarray, width: int, weights: np.ndarray) -> np.ndarray:
    table = prob * weights[popcounts(width)]
    subset_sum(table, width)
    return table


def shap_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """R' and Q for a group of leaves of one width."""
    return [_zeta_weighted(prob, width, w) for w in _shapley_weights(width)]


def shap_slot_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """Per slot j, the leaf's SHAP value as a function of a: R'(a) - Q(a without j)."""
    r_prime, q = shap_tables(prob, width)
    masks = np.arange(1 << width)
    return [r_prime - q[:, masks & ~(1 << j)] for j in range(width)]


def pair_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """T0, T1, T2 for a group of leaves of one width."""
    return [_zeta_weighted(prob, width, w) for w in _interaction_weights(width)]


def pair_slot_tables(prob: np.ndarray, width: int) -> list[np.ndarray]:
    """Per slot pair (j, k): T0(a) - T1(a without j) - T1(a without k) + T2(a without j, k)."""
    t0, t1, t2 = pair_tables(prob, width)
    masks = np.arange(1 << width)
    return [
        t0
        - t1[:, masks & ~(1 << j)]
        - t1[:, masks & ~(1 << k)]
        + t2[:, masks & ~((1 << j) | (1 << k))]
        for j, k in slot_pairs(width)
    ]

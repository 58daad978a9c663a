"""Agreement between assessors: Krippendorff's alpha (ordinal) and Fleiss' kappa, in numpy.

Both are written here from their definitions (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability"; Fleiss 1971) and checked against the ``krippendorff`` and ``statsmodels``
packages in the tests.

>>> data = [[1, 2, 3, 3], [1, 2, 3, 4], [1, 3, 3, 4]]
>>> round(krippendorff_alpha_ordinal(data), 6)
0.827244
>>> round(fleiss_kappa(ratings_table(data, categories=[1, 2, 3, 4])), 6)
0.529412
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab.errors import InputError

__all__ = ["krippendorff_alpha_ordinal", "fleiss_kappa", "ratings_table", "coincidence_matrix"]


def _reliability_data(data: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(data, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError.bad(
            name, "a numeric (raters, units) matrix, NaN for missing", data
        ) from exc
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise InputError.bad(name, "a (raters, units) matrix with at least two raters", arr)
    if np.isinf(arr).any():
        raise InputError.bad(name, "finite values or NaN for missing", arr)
    return arr


def coincidence_matrix(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """The values present and Krippendorff's coincidence matrix ``o[c, k]``.

    Each unit with ``m >= 2`` ratings adds, for every ordered pair of its ratings from different
    raters, ``1 / (m - 1)`` to ``o[c, k]``; units with fewer ratings are not pairable.

    Examples
    --------
    >>> values, o = coincidence_matrix([[1, 1, 2], [1, 2, 2]])
    >>> values.tolist(), o.tolist()
    ([1.0, 2.0], [[2.0, 1.0], [1.0, 2.0]])
    """
    arr = _reliability_data(data, "data")
    values = np.unique(arr[~np.isnan(arr)])
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in arr.T:
        present = unit[~np.isnan(unit)]
        m = len(present)
        if m < 2:
            continue
        counts = np.zeros(len(values))
        for v in present:
            counts[index[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    return values, o


def krippendorff_alpha_ordinal(data: Any) -> float:
    """Krippendorff's alpha for ordinal ratings.

    Parameters
    ----------
    data : array-like, shape (raters, units)
        Ratings (ordered numbers); NaN marks a missing rating.

    Returns
    -------
    float
        ``1 - D_o / D_e`` with the ordinal distance
        ``delta(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2`` over the values' pairable
        counts ``n_g``. NaN when it is undefined: no unit has two ratings, or every pairable
        rating has the same value (no expected disagreement).

    Examples
    --------
    >>> round(krippendorff_alpha_ordinal([[1, 2, 3], [1, 2, 3]]), 6)
    1.0
    >>> import math
    >>> math.isnan(krippendorff_alpha_ordinal([[2, 2], [2, 2]]))
    True
    """
    values, o = coincidence_matrix(data)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1 or np.count_nonzero(n_c) < 2:
        return float("nan")
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    i, k = np.meshgrid(np.arange(len(values)), np.arange(len(values)), indexing="ij")
    lo, hi = np.minimum(i, k), np.maximum(i, k)
    between = cumulative[hi + 1] - cumulative[lo]
    delta = (between - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    d_observed = (o * delta).sum()
    d_expected = (np.outer(n_c, n_c) * delta).sum() / (n - 1)
    if d_expected == 0:
        return float("nan")
    return float(1.0 - d_observed / d_expected)


def ratings_table(data: Any, categories: Sequence[Any] | None = None) -> np.ndarray:
    """Count table ``(units, categories)`` of a ``(raters, units)`` matrix, for Fleiss' kappa.

    Units with a missing rating (NaN) are left out: Fleiss' kappa needs every unit rated by the
    same number of raters.

    Examples
    --------
    >>> ratings_table([[1, 2], [1, 1], [2, float("nan")]], categories=[1, 2]).tolist()
    [[2, 1]]
    """
    arr = _reliability_data(data, "data")
    complete = ~np.isnan(arr).any(axis=0)
    arr = arr[:, complete]
    if categories is None:
        cats = np.unique(arr)
    else:
        try:
            cats = np.asarray(categories, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError.bad("categories", "the rating values (numbers)", categories) from exc
        if cats.ndim != 1 or np.unique(cats).size != cats.size:  # a repeat counts ratings twice
            raise InputError.bad("categories", "distinct rating values, each once", categories)
    if np.setdiff1d(np.unique(arr), cats).size:
        raise InputError.bad("categories", "every rating value among the categories", categories)
    return (arr.T[:, :, None] == cats[None, None, :]).sum(axis=1)


def fleiss_kappa(table: Any) -> float:
    """Fleiss' kappa of a ``(units, categories)`` count table with the same raters per unit.

    ``kappa = (P_bar - P_e) / (1 - P_e)``, ``P_bar`` the mean pairwise agreement within units and
    ``P_e`` the sum of squared category shares. NaN when ``P_e == 1`` (one category only) or the
    table has no unit.

    Examples
    --------
    >>> round(fleiss_kappa([[7, 1], [3, 5]]), 6)
    0.161905
    """
    try:
        t = np.asarray(table, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError.bad("table", "a numeric (units, categories) count table", table) from exc
    if t.ndim == 2 and t.shape[0] == 0:  # no unit (ratings_table of no complete unit)
        return float("nan")
    if t.ndim != 2 or t.shape[1] < 1 or (t < 0).any() or not np.isfinite(t).all():
        raise InputError.bad("table", "a (units, categories) table of non-negative counts", t)
    raters = t.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise InputError.bad("table", "the same number (>= 2) of raters in every row", raters)
    r = raters[0]
    p_j = t.sum(axis=0) / t.sum()
    p_i = ((t * t).sum(axis=1) - r) / (r * (r - 1))
    p_bar, p_e = p_i.mean(), (p_j**2).sum()
    if np.isclose(p_e, 1.0, rtol=0, atol=1e-15):
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))

"""Rank correlations row by row: one row per bootstrap resample, all rows at once.

Both equal scipy's (``spearmanr``, ``kendalltau`` with tau-b) on each row, NaN where a row is
constant, but take a whole (B, M) matrix of resamples in one vectorised call.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from trustlab.evaluation import _bootstrap


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho between ``x[b]`` and ``y[b]`` for every row ``b`` (average ranks for ties).

    NaN where a row is constant, as in :func:`scipy.stats.spearmanr`.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    rx = stats.rankdata(x, axis=1)
    ry = stats.rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denominator = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(axis=1) / denominator
    return np.where(denominator > 0, np.clip(rho, -1.0, 1.0), np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``x[b]`` and ``y[b]`` for every row ``b``, from all pairs.

    NaN where a row is constant, as in :func:`scipy.stats.kendalltau`. O(B M^2), chunked.
    The pairs are compared on the rows' ranks (which order them as the values do): equal
    infinite values are a tie there, where their difference (inf - inf) would be NaN.
    """
    x = stats.rankdata(np.atleast_2d(np.asarray(x, dtype=np.float64)), axis=1)
    y = stats.rankdata(np.atleast_2d(np.asarray(y, dtype=np.float64)), axis=1)
    first, second = np.triu_indices(x.shape[1], 1)
    out = np.empty(x.shape[0])
    step = max(1, _bootstrap.CHUNK_ELEMENTS // max(1, len(first)))
    for start in range(0, x.shape[0], step):
        rows = slice(start, start + step)
        sx = np.sign(x[rows, first] - x[rows, second])
        sy = np.sign(y[rows, first] - y[rows, second])
        untied = np.count_nonzero(sx, axis=1) * np.count_nonzero(sy, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (sx * sy).sum(axis=1) / np.sqrt(untied)
        out[rows] = np.where(untied > 0, np.clip(tau, -1.0, 1.0), np.nan)
    return out

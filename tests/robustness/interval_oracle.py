"""A base classifier whose smoothed probabilities are known exactly (the spec's strongest oracle).

``f(x) = k`` iff ``v . x`` lies in ``[t_{k-1}, t_k)`` for a unit vector ``v``. Under
``N(0, sigma^2 I)`` noise, ``v . (x + delta) ~ N(v . x, sigma^2)``, so
``p_k(x) = Phi((t_k - s) / sigma) - Phi((t_{k-1} - s) / sigma)`` with ``s = v . x``; and since
only ``v . x`` matters, the true radius is the smallest ``|shift|`` along ``v`` that changes the
smoothed prediction (found by a scan).
"""

import numpy as np
from scipy import special

SCAN_STEP = 1e-4


class IntervalClassifier:
    def __init__(self, thresholds, direction):
        self.thresholds = np.asarray(thresholds, dtype=float)
        direction = np.asarray(direction, dtype=float)
        self.direction = direction / np.linalg.norm(direction)

    @property
    def num_classes(self):
        return len(self.thresholds) + 1

    def __call__(self, batch):
        return np.searchsorted(self.thresholds, batch @ self.direction, side="right")

    def point(self, s):
        """An input (or, for an array ``s``, a batch) whose projection on the direction is s."""
        return np.multiply.outer(s, self.direction)


def exact_probabilities(thresholds, s, sigma):
    """Smoothed class probabilities at projections ``s`` (scalar or array): shape (..., K)."""
    edges = np.concatenate(([-np.inf], np.asarray(thresholds, dtype=float), [np.inf]))
    s = np.asarray(s, dtype=float)[..., None]
    low, high = (edges[:-1] - s) / sigma, (edges[1:] - s) / sigma
    # Differences of upper tails where both ends are positive: no cancellation to 0 there.
    lower_tail = special.ndtr(high) - special.ndtr(low)
    upper_tail = special.ndtr(-low) - special.ndtr(-high)
    return np.where(low > 0, upper_tail, lower_tail)


def true_radius(thresholds, s0, sigma, stop, limit=None):
    """Smallest scanned ``|shift|`` where ``stop(argmax p(s0 + shift))`` holds (inf if none).

    The scan moves both ways in steps of SCAN_STEP, so the returned value is at most SCAN_STEP
    above the exact radius. With ``limit`` it stops there (inf: nothing below ``limit``).
    """
    limit = 8 * sigma + np.ptp(np.r_[thresholds, s0]) if limit is None else limit
    shifts = np.arange(0.0, limit, SCAN_STEP)
    right = exact_probabilities(thresholds, s0 + shifts, sigma).argmax(axis=1)
    left = exact_probabilities(thresholds, s0 - shifts, sigma).argmax(axis=1)
    hits = np.flatnonzero(stop(right) | stop(left))
    return float(shifts[hits[0]]) if hits.size else np.inf


def true_cs_radius(thresholds, s0, sigma, harmful, limit=None):
    return true_radius(thresholds, s0, sigma, lambda top: np.isin(top, list(harmful)), limit)


def true_std_radius(thresholds, s0, sigma, top_class, limit=None):
    return true_radius(thresholds, s0, sigma, lambda top: top != top_class, limit)

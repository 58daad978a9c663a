"""The statistics of randomized-smoothing certificates, from class counts alone.

Everything here works on counts of the base classifier's labels under noise; nothing samples.
The bounds are one-sided Clopper-Pearson bounds (exact binomial), as in Cohen et al. (2019):
``lower(k, n, a)`` is the ``a`` quantile of Beta(k, n - k + 1) and ``upper(k, n, a)`` the
``1 - a`` quantile of Beta(k + 1, n - k), the two ends of statsmodels'
``proportion_confint(k, n, alpha=2 a, method="beta")``.

Budget of a cost-sensitive certificate (the Bonferroni split of the spec): with ``m = |Omega|``
harmful targets, ``p_A >= lower(c_A, n, alpha / 2)`` and, for every harmful ``j``,
``p_j <= upper(c_j, n, alpha / (2 m))``. The ``m + 1`` events fail with total probability at
most ``alpha / 2 + m * alpha / (2 m) = alpha``, so every radius computed from these bounds, the
group radius, all the pair radii and their combination, holds at once with probability
``1 - alpha``. (The authors' code evaluates ``alpha/2*card`` as ``(alpha / 2) * m``, which is
anti-conservative for ``m > 1``; see the spec's list of defects.)
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from trustlab._checks import check_in_range
from trustlab.errors import InputError
from trustlab.robustness._sampling import check_sigma

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "standard_radius",
    "certify_arrays",
    "radii_from_bounds",
    "prediction_pvalue",
    "accuracy_deficit",
    "mean_cost",
]


def clopper_pearson_lower(successes, trials, alpha):
    """One-sided ``1 - alpha`` lower Clopper-Pearson bound on a binomial proportion.

    Vectorised over its arguments (broadcast together); 0 where ``successes == 0``. Counts are
    whole numbers with ``0 <= successes <= trials`` and ``trials >= 1``; ``0 < alpha < 1``.
    """
    return _lower(*_check_counts(successes, trials, alpha))


def clopper_pearson_upper(successes, trials, alpha):
    """One-sided ``1 - alpha`` upper Clopper-Pearson bound on a binomial proportion.

    Vectorised over its arguments (broadcast together); 1 where ``successes == trials``.
    Computed through the complemented inverse (like statsmodels' ``beta.isf``), which keeps the
    precision near 1. Arguments as in :func:`clopper_pearson_lower`.
    """
    return _upper(*_check_counts(successes, trials, alpha))


def _check_counts(successes, trials, alpha) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The public bounds' arguments as float arrays, refused (naming the argument) unless the
    counts are whole numbers with 0 <= successes <= trials, trials >= 1, and 0 < alpha < 1:
    outside those the beta quantiles are NaN, or a number that bounds nothing."""
    k = _numbers(successes, "successes")
    n = _numbers(trials, "trials")
    a = _numbers(alpha, "alpha")
    for arr, name, least in ((k, "successes", 0), (n, "trials", 1)):
        if np.any(arr != np.floor(arr)) or np.any(arr < least):
            raise InputError.bad(name, f"whole numbers >= {least}", arr)
    if np.any(a <= 0.0) or np.any(a >= 1.0):
        raise InputError.bad("alpha", "numbers in (0, 1)", a)
    try:
        shape = np.broadcast_shapes(k.shape, n.shape, a.shape)
    except ValueError:
        raise InputError(
            f"successes, trials and alpha: expected shapes that broadcast together, got "
            f"{k.shape}, {n.shape} and {a.shape}",
            argument="successes",
        ) from None
    if np.any(np.broadcast_to(k, shape) > np.broadcast_to(n, shape)):
        raise InputError.bad("successes", "at most trials", k)
    return k, n, a


def _numbers(value, name: str) -> np.ndarray:
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":  # text, bool, None or objects: not a count
        raise InputError.bad(name, "numbers", value)
    arr = raw.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError.bad(name, "finite numbers", arr)
    return arr


def _probabilities(value, name: str) -> np.ndarray:
    """``value`` as a float array of probabilities, refused (naming it) unless all are numbers
    in [0, 1]: outside, Phi^-1 gives an infinite radius or NaN, which reads as a certificate."""
    arr = _numbers(value, name)
    if np.any(arr < 0.0) or np.any(arr > 1.0):
        raise InputError.bad(name, "probabilities in [0, 1]", arr)
    return arr


def _lower(k: np.ndarray, n: np.ndarray, alpha):
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betaincinv(k, n - k + 1.0, alpha)
    bound = np.where(k > 0, bound, 0.0)
    return bound if bound.ndim else float(bound)


def _upper(k: np.ndarray, n: np.ndarray, alpha):
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betainccinv(k + 1.0, n - k, alpha)
    bound = np.where(k < n, bound, 1.0)
    return bound if bound.ndim else float(bound)


def standard_radius(p_lower, sigma):
    """Cohen's radius ``sigma * Phi^-1(p_lower)``, and 0 where ``p_lower <= 1/2`` (abstain).

    ``p_lower`` is a probability (in [0, 1]) and ``0 < sigma <= MAX_SIGMA``; others are refused
    naming the argument (a bound of 1.5 gave an infinite radius, a negative sigma a negative one).
    """
    p = _probabilities(p_lower, "p_lower")
    sigma = check_sigma(sigma)
    radius = np.where(p > 0.5, sigma * special.ndtri(np.clip(p, 0.5, 1.0)), 0.0)
    return radius if radius.ndim else float(radius)


def certify_arrays(
    top: np.ndarray,
    counts: np.ndarray,
    harmful: np.ndarray,
    sigma: float,
    alpha: float,
) -> dict[str, np.ndarray]:
    """Standard, cost-sensitive and pair certificates of many points from their counts.

    Parameters
    ----------
    top : (m,) int array
        The top class ``A`` of each point, chosen on separate selection samples.
    counts : (m, K) int array
        Label counts of the ``n`` estimation samples (each row sums to ``n``).
    harmful : (m, K) bool array
        ``harmful[i, j]``: class ``j`` is in point i's sensitive set Omega.
    sigma, alpha : float

    Returns
    -------
    dict of arrays
        ``p_lower_std`` and ``radius_std`` (Cohen at level alpha; radius 0 when abstaining),
        ``abstain``; ``p_lower`` (level alpha/2), ``p_upper`` ((m, K), NaN outside Omega),
        and the radii of :func:`radii_from_bounds`.
    """
    m = len(counts)
    n = counts.sum(axis=1)
    n_top = counts[np.arange(m), top]
    n, n_top = n.astype(np.float64), n_top.astype(np.float64)  # checked by the callers
    p_lower_std = _lower(n_top, n, alpha)
    n_harmful = harmful.sum(axis=1)
    p_lower = _lower(n_top, n, alpha / 2.0)
    # Bonferroni: alpha / (2 |Omega|) for each harmful target of the point.
    per_target = alpha / (2.0 * np.maximum(n_harmful, 1))
    p_upper = _upper(counts.astype(np.float64), n[:, None], per_target[:, None])
    p_upper = np.where(harmful, p_upper, np.nan)
    return {
        "p_lower_std": np.asarray(p_lower_std, dtype=np.float64),
        "radius_std": np.asarray(standard_radius(p_lower_std, sigma), dtype=np.float64),
        "abstain": np.asarray(p_lower_std) <= 0.5,
        "p_lower": np.asarray(p_lower, dtype=np.float64),
        "p_upper": p_upper,
        **radii_from_bounds(top, p_lower, p_upper, harmful, sigma),
    }


def radii_from_bounds(
    top: np.ndarray,
    p_lower: np.ndarray,
    p_upper: np.ndarray,
    harmful: np.ndarray,
    sigma: float,
) -> dict[str, np.ndarray]:
    """Cost-sensitive radii from a lower bound on ``p_A`` and upper bounds on the ``p_j``.

    With exact probabilities in place of the bounds this is the exact-probability certificate.

    Returns
    -------
    dict of arrays
        ``pair_radii`` ((m, K), NaN outside Omega), ``radius_cs`` (the group radius with the
        largest upper bound as is), ``radius`` (the combined certificate, the bounds capped at
        ``1 - p_lower``), ``top_is_harmful`` and ``n_harmful``. Raw values: a radius may be
        negative or -inf (nothing certified; -inf whenever the top class is harmful), and is
        +inf for a point without harmful targets.
    """
    p_lower = _probabilities(p_lower, "p_lower")
    sigma = check_sigma(sigma)
    upper = np.where(harmful, p_upper, 0.0)  # NaN outside Omega is allowed (certify_arrays')
    _probabilities(upper, "p_upper")
    rows = np.arange(len(top))
    with np.errstate(divide="ignore", invalid="ignore"):
        z_lower = special.ndtri(p_lower)
        # p_j <= 1 - p_A <= 1 - p_lower holds on the same event: capping costs no confidence
        # and makes every radius at least sigma * Phi^-1(p_lower).
        capped = np.minimum(upper, (1.0 - p_lower)[:, None])
        pair_all = 0.5 * sigma * (z_lower[:, None] - special.ndtri(capped))
        worst_upper = np.where(harmful, upper, -np.inf).max(axis=1)
        radius_cs = 0.5 * sigma * (z_lower - special.ndtri(np.clip(worst_upper, 0.0, 1.0)))
    n_harmful = harmful.sum(axis=1)
    radius = np.where(harmful, pair_all, np.inf).min(axis=1)
    pair_radii = np.where(harmful, pair_all, np.nan)
    radius_cs = np.where(n_harmful == 0, np.inf, radius_cs)
    top_is_harmful = harmful[rows, top]
    radius_cs = np.where(top_is_harmful, -np.inf, radius_cs)
    radius = np.where(top_is_harmful, -np.inf, radius)
    pair_radii = np.where(top_is_harmful[:, None] & harmful, -np.inf, pair_radii)
    return {
        "pair_radii": pair_radii,
        "radius_cs": radius_cs,
        "radius": radius,
        "top_is_harmful": top_is_harmful,
        "n_harmful": n_harmful,
    }


def prediction_pvalue(top_count: int, second_count: int) -> float:
    """Two-sided binomial test of ``top_count`` of ``top_count + second_count`` at p = 1/2."""
    top_count = _whole(top_count, "top_count", 0)
    second_count = _whole(second_count, "second_count", 0)
    total = top_count + second_count
    if total == 0:
        return 1.0
    return float(stats.binomtest(top_count, total, 0.5).pvalue)


def _whole(value, name: str, least: int) -> int:
    """One whole number ``>= least`` as an int; a float count such as 3.0 too (as the
    Clopper-Pearson bounds take it, and as these functions did before their checks)."""
    arr = _numbers(value, name)
    # beyond 2**53 a float count is not exact, and scipy's binomial test fails on it (1e300)
    if arr.ndim or arr < least or arr != np.floor(arr) or arr > 2.0**53:
        raise InputError.bad(name, f"a whole number in [{least}, 2**53]", value)
    return int(arr)


def accuracy_deficit(alpha: float, num_points: int, confidence: float) -> float:
    """How much to subtract from an approximate certified accuracy for a high-probability bound.

    Each point's certificate fails with probability at most ``alpha``, independently across
    points (trustlab draws each point's noise from its own stream). By Bernstein's inequality,
    with probability at least ``confidence`` the share of failed certificates is at most
    ``alpha + t`` with ``t = L / (3 N) + sqrt(L^2 / (9 N^2) + 2 alpha (1 - alpha) L / N)`` and
    ``L = log(1 / (1 - confidence))`` (Cohen et al., 2019, appendix).
    """
    alpha = check_in_range(alpha, "alpha", 0.0, 1.0, low_open=True, high_open=True)
    num_points = _whole(num_points, "num_points", 1)
    confidence = check_in_range(confidence, "confidence", 0.0, 1.0, low_open=True, high_open=True)
    log_term = np.log(1.0 / (1.0 - confidence))
    n = float(num_points)
    variance = alpha * (1.0 - alpha)
    t = log_term / (3 * n) + np.sqrt(log_term**2 / (9 * n**2) + 2 * variance * log_term / n)
    return float(alpha + t)


def mean_cost(costs, n):
    """The mean of ``n`` finite non-negative costs (NaN for none), also when their sum overflows
    float64 (costs near 1.8e308, where the plain mean is inf)."""
    if n == 0:
        return np.nan
    with np.errstate(over="ignore"):
        mean = float(np.mean(costs))
    return mean if np.isfinite(mean) else float((np.asarray(costs) / n).sum())

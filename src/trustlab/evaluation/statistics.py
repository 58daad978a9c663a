"""Statistics for human judgments and model comparisons: tests, intervals, power and sample sizes.

Generic building blocks shared by the evaluations (CASE-Bench's human statistics first):

- :func:`two_proportion_ztest` (pooled), :func:`per_item_ztests` (one pooled test per item,
  vectorised), :func:`wilcoxon_signed_rank` (paired differences), :func:`mcnemar_test` (paired
  binary outcomes), :func:`paired_comparison` (two paired success vectors: the 2x2 table,
  both success rates with :func:`wilson_interval` intervals, McNemar's test);
- :func:`cluster_bootstrap_ci`: a percentile interval that resamples whole clusters (votes are
  clustered by item, so resampling single votes understates the uncertainty);
- :func:`cohens_h`, :func:`normal_power`, :func:`normal_sample_size` (statsmodels'
  ``NormalIndPower`` convention), and :func:`sample_size` / :func:`achieved_power` for two
  proportions in four designs (:data:`DESIGNS`): ``independent`` (pooled, Cohen's h),
  ``unpooled`` (Fleiss), ``one-sample`` (p1 against the reference p2) and ``paired`` (paired t on
  the within-pair difference of two binary outcomes).

The z-tests, the power and the sample sizes are closed forms written here with scipy's
distributions, tested against statsmodels (tests/evaluation/test_statistics.py), so the module
needs no statsmodels at run time; the Wilcoxon test is scipy's own (tested against an enumeration
of sign patterns).

Why this module is long: it is the one statistics module the evaluations share (the brief of
issue #19 names it); its four parts (tests, the cluster bootstrap, power, sample sizes) are
small and reuse one another's closed forms. It becomes a package when a fifth part arrives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_bool,
    check_choice,
    check_in_range,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
    check_same_length,
)
from trustlab._results import Result, new_axes
from trustlab.errors import InputError

__all__ = [
    "ALTERNATIVES",
    "DESIGNS",
    "SignificanceTest",
    "ItemTests",
    "ClusterInterval",
    "SampleSize",
    "PairedComparison",
    "two_proportion_ztest",
    "per_item_ztests",
    "wilcoxon_signed_rank",
    "mcnemar_test",
    "paired_comparison",
    "wilson_interval",
    "cluster_bootstrap_ci",
    "cohens_h",
    "normal_power",
    "normal_sample_size",
    "sample_size",
    "achieved_power",
]

ALTERNATIVES = ("two-sided", "larger", "smaller")
DESIGNS = ("independent", "unpooled", "one-sample", "paired")
# Largest sample size the solvers search (per group); beyond it a design is hopeless anyway.
MAX_N = 1e9


@dataclass(frozen=True)
class SignificanceTest(Result):
    """One hypothesis test: its statistic, p-value and what was tested.

    Attributes
    ----------
    method : str
    statistic : float
    p_value : float
    alternative : str
        "two-sided", "larger" (first > second) or "smaller".
    estimate : float
        The effect the test is about (difference of proportions, median difference ...).
    n : int
        Observations used (votes, non-zero differences, discordant pairs).
    """

    method: str
    statistic: float
    p_value: float
    alternative: str
    estimate: float
    n: int

    def summary(self) -> str:
        return (
            f"{self.method} ({self.alternative}): statistic {self.statistic:.4g}, "
            f"p = {self.p_value:.3g}, estimate {self.estimate:.4g}, n = {self.n}"
        )


@dataclass(frozen=True, eq=False)
class ItemTests(Result):
    """One pooled two-proportion z-test per item (NaN where both proportions are 0 or both 1)."""

    statistics: np.ndarray
    p_values: np.ndarray
    differences: np.ndarray
    alternative: str

    def n_significant(self, alpha: float = 0.05, direction: int = 0) -> int:
        """Items with p < alpha; ``direction`` +1 / -1 keeps only increases / decreases."""
        keep = self.p_values < alpha
        if direction:
            keep &= np.sign(self.differences) == np.sign(direction)
        return int(keep.sum())

    def summary(self) -> str:
        return (
            f"{len(self.p_values)} per-item z-tests ({self.alternative}): "
            f"{self.n_significant()} with p < 0.05"
        )


@dataclass(frozen=True)
class ClusterInterval(Result):
    """A cluster bootstrap percentile interval around an estimate."""

    estimate: float
    low: float
    high: float
    standard_error: float
    confidence_level: float
    n_clusters: int
    n_bootstrap: int

    def summary(self) -> str:
        return (
            f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}] "
            f"({self.confidence_level:.0%} cluster bootstrap over {self.n_clusters} clusters, "
            f"{self.n_bootstrap} resamples; SE {self.standard_error:.4f})"
        )


@dataclass(frozen=True)
class SampleSize(Result):
    """Observations per group needed to detect p1 vs p2 with a two-sided test.

    Attributes
    ----------
    design : str
        One of :data:`DESIGNS`.
    n : float
        The real-valued solution; ``n_required`` is its ceiling (per group; pairs for paired).
    effect_size : float
        Cohen's h (independent, one-sample) or the standardised paired difference (paired) or
        the raw difference p1 - p2 (unpooled).
    power_at_n_required : float
        The power actually achieved with ``n_required``.
    discordant : float or None
        The discordant share given (the paired design uses it; None: its default).
    """

    design: str
    p1: float
    p2: float
    alpha: float
    power: float
    ratio: float
    effect_size: float
    n: float
    n_required: int
    power_at_n_required: float
    discordant: float | None = None

    def summary(self) -> str:
        return (
            f"{self.design} design, p1 = {self.p1:g} vs p2 = {self.p2:g} (effect "
            f"{self.effect_size:.5f}), alpha {self.alpha:g}, power {self.power:g}: "
            f"n = {self.n:.4f} -> {self.n_required} {self._unit()} "
            f"(power {self.power_at_n_required:.4f})"
        )

    def _unit(self) -> str:
        """What n counts: pairs (paired), observations (one-sample), else per group, or the
        p1 group's size when the p2 group is ``ratio`` times as large."""
        if self.design == "paired":
            return "pairs"
        if self.design == "one-sample":
            return "observations"
        if self.ratio == 1.0:
            return "per group"
        other = math.ceil(round(self.ratio * self.n_required, 9))
        return f"in the p1 group ({other} in the p2 group, ratio {self.ratio:g})"

    def plot(self, ax=None):
        """Power against n (per group, pairs or observations, as the design counts) around the
        solution."""
        ax = new_axes(ax, figsize=(5.5, 3.8))
        grid = np.unique(np.linspace(2, max(4, 2.5 * self.n_required), 80).astype(int))
        powers = [
            achieved_power(
                self.p1, self.p2, int(k), self.alpha, self.design, self.ratio, self.discordant
            )
            for k in grid
        ]
        ax.plot(grid, powers)
        ax.axhline(self.power, color="grey", ls="--", lw=0.8)
        ax.axvline(self.n_required, color="grey", ls=":", lw=0.8)
        unit = {"paired": "pairs", "one-sample": "observations"}.get(self.design)
        ax.set_xlabel(
            f"n ({unit})" if unit else "n per group" if self.ratio == 1.0 else "n (p1 group)"
        )
        ax.set_ylabel("power")
        ax.set_title(f"{self.design}: n = {self.n_required}")
        return ax


# --------------------------------------------------------------------------- tests


def _p_value(z: Any, alternative: str) -> Any:
    if alternative == "two-sided":
        return 2.0 * stats.norm.sf(np.abs(z))
    if alternative == "larger":
        return stats.norm.sf(z)
    return stats.norm.cdf(z)


def _pooled_z(s1, n1, s2, n2) -> tuple[np.ndarray, np.ndarray]:
    p1, p2 = s1 / n1, s2 / n2
    pooled = (s1 + s2) / (n1 + n2)
    se = np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, (p1 - p2) / np.where(se > 0, se, 1.0), np.nan)
    return z, p1 - p2


def _counts(successes: Any, trials: Any, name: str, length: int | None = None):
    s = as_float_array(successes, name, ndim=1)
    n = as_float_array(trials, name.replace("successes", "trials"), ndim=1)
    check_same_length(**{name: s, name.replace("successes", "trials"): n})
    if length is not None and len(s) != length:
        raise InputError.bad(name, f"{length} counts", s)
    if (n <= 0).any() or (s < 0).any() or (s > n).any():
        raise InputError.bad(name, "counts with 0 <= successes <= trials and trials > 0", s)
    return s, n


def two_proportion_ztest(
    successes: Any, trials: Any, alternative: str = "two-sided"
) -> SignificanceTest:
    """Pooled two-proportion z-test of p1 = p2.

    z = (p1 - p2) / sqrt(pbar (1 - pbar) (1/n1 + 1/n2)), pbar the pooled proportion.

    Parameters
    ----------
    successes, trials : array-like of 2
        Counts of the two groups.
    alternative : {"two-sided", "larger", "smaller"}

    >>> round(two_proportion_ztest([60, 40], [100, 100]).statistic, 4)
    2.8284
    """
    check_choice(alternative, "alternative", ALTERNATIVES)
    s, n = _counts(successes, trials, "successes", length=2)
    z, diff = _pooled_z(s[0], n[0], s[1], n[1])
    return SignificanceTest(
        "pooled two-proportion z-test",
        float(z),
        float(_p_value(z, alternative)),
        alternative,
        float(diff),
        int(n.sum()),
    )


def per_item_ztests(
    successes1: Any,
    trials1: Any,
    successes2: Any,
    trials2: Any,
    alternative: str = "two-sided",
) -> ItemTests:
    """A pooled two-proportion z-test per item (vectorised); items whose pooled proportion is 0
    or 1 have no variance and get NaN (never significant)."""
    check_choice(alternative, "alternative", ALTERNATIVES)
    s1, n1 = _counts(successes1, trials1, "successes1")
    s2, n2 = _counts(successes2, trials2, "successes2", length=len(s1))
    z, diff = _pooled_z(s1, n1, s2, n2)
    return ItemTests(z, _p_value(z, alternative), diff, alternative)


def wilcoxon_signed_rank(
    differences: Any, alternative: str = "two-sided", method: str = "auto"
) -> SignificanceTest:
    """Wilcoxon signed-rank test that paired differences are centred on 0 (scipy's
    ``wilcoxon``, with Wilcoxon's zero handling: zero differences are dropped).

    ``method``: "exact" (the null distribution of the rank sum; differences without ties),
    "asymptotic" (normal approximation with the tie correction) or "auto" (scipy's choice:
    exact for small samples without ties or zeros, a permutation over sign patterns for small
    samples with them, else the approximation). The statistic is scipy's: the smaller rank sum
    for a two-sided test, else the rank sum of the positive differences.
    """
    check_choice(alternative, "alternative", ALTERNATIVES)
    check_choice(method, "method", ("auto", "exact", "asymptotic"))
    d = as_float_array(differences, "differences", ndim=1)
    n = int((d != 0).sum())
    if n == 0:
        raise InputError.bad("differences", "at least one non-zero difference", differences)
    if method == "exact" and len(np.unique(np.abs(d[d != 0]))) < n:
        raise InputError.bad("method", "'asymptotic' or 'auto' for differences with ties", method)
    scipy_alternative = {"larger": "greater", "smaller": "less"}.get(alternative, alternative)
    result = stats.wilcoxon(d, zero_method="wilcox", alternative=scipy_alternative, method=method)
    return SignificanceTest(
        f"Wilcoxon signed-rank ({method})",
        float(result.statistic),
        float(result.pvalue),
        alternative,
        float(np.median(d)),
        n,
    )


def _mcnemar_method(exact: bool, correction: bool) -> str:
    if exact:
        return "McNemar (exact binomial)"
    return "McNemar (chi-square, continuity-corrected)" if correction else "McNemar (chi-square)"


def mcnemar_test(
    only_first: int, only_second: int, exact: bool = True, *, correction: bool = False
) -> SignificanceTest:
    """McNemar's test on paired binary outcomes from the discordant pairs.

    ``only_first`` (b) counts pairs positive under the first condition only, ``only_second``
    (c) under the second only. Exact: the two-sided binomial test of b among b + c at 1/2
    (``2 P(X <= min(b, c))`` clipped at 1); otherwise the chi-square statistic
    (b - c)^2 / (b + c) on one degree of freedom, or with ``correction=True`` Edwards'
    continuity-corrected (|b - c| - 1)^2 / (b + c) (statsmodels' ``mcnemar`` default; as there,
    the correction is not clipped at 0, so b = c gives 1 / (b + c)). ``correction`` is ignored
    when ``exact``.

    >>> round(mcnemar_test(5, 15).p_value, 6)
    0.041389
    >>> round(mcnemar_test(5, 15, exact=False, correction=True).p_value, 6)
    0.044171
    """
    b = check_positive_int(only_first, "only_first", minimum=0)
    c = check_positive_int(only_second, "only_second", minimum=0)
    exact = check_bool(exact, "exact")
    correction = check_bool(correction, "correction")
    total = b + c
    if total == 0:
        raise InputError.bad("only_first", "at least one discordant pair (b + c > 0)", 0)
    if exact:
        statistic = float(min(b, c))
        p_value = min(1.0, 2.0 * stats.binom.cdf(min(b, c), total, 0.5))
    else:
        statistic = (abs(b - c) - int(correction)) ** 2 / total
        p_value = float(stats.chi2.sf(statistic, 1))
    return SignificanceTest(
        _mcnemar_method(exact, correction),
        statistic,
        float(p_value),
        "two-sided",
        (b - c) / total,
        total,
    )


@dataclass(frozen=True)
class PairedComparison(Result):
    """Two paired success vectors compared: the 2x2 table, both rates and McNemar's test.

    Attributes
    ----------
    table : tuple of tuples
        ``((both, first only), (second only, neither))``: pair counts.
    rate_first, rate_second : float
        Success rates of the two conditions.
    interval_first, interval_second : tuple of float
        Their Wilson score intervals at ``confidence_level``.
    p_value, statistic : float
        McNemar's test on the discordant pairs (1.0 and 0.0 when there are none).
    method : str
    n : int
        Pairs.
    confidence_level : float
    """

    table: tuple[tuple[int, int], tuple[int, int]]
    rate_first: float
    rate_second: float
    interval_first: tuple[float, float]
    interval_second: tuple[float, float]
    p_value: float
    statistic: float
    method: str
    n: int
    confidence_level: float = 0.95

    figure_size = (5.0, 3.6)

    @property
    def discordant(self) -> int:
        """Pairs where exactly one condition succeeded (b + c)."""
        return self.table[0][1] + self.table[1][0]

    def summary(self) -> str:
        (lo1, hi1), (lo2, hi2) = self.interval_first, self.interval_second
        level = f"{self.confidence_level:.0%} Wilson"
        lines = [
            f"{self.n} pairs: first {self.rate_first:.3f} [{lo1:.3f}, {hi1:.3f}], "
            f"second {self.rate_second:.3f} [{lo2:.3f}, {hi2:.3f}] ({level})",
            f"first only {self.table[0][1]}, second only {self.table[1][0]}, "
            f"both {self.table[0][0]}, neither {self.table[1][1]}",
        ]
        if self.discordant == 0:
            lines.append(f"{self.method}: no discordant pairs, no evidence of a difference (p = 1)")
        else:
            lines.append(f"{self.method}: statistic {self.statistic:.4g}, p = {self.p_value:.3g}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Both success rates with their Wilson intervals."""
        ax = new_axes(ax, figsize=self.figure_size)
        rates = np.array([self.rate_first, self.rate_second])
        intervals = np.array([self.interval_first, self.interval_second])
        errors = np.abs(intervals.T - rates)
        ax.bar([0, 1], rates, yerr=errors, capsize=6, color=["tab:red", "tab:blue"])
        ax.set_xticks([0, 1], ["first", "second"])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("success rate")
        ax.set_title(f"McNemar p = {self.p_value:.3g} ({self.n} pairs)")
        return ax


def _paired_outcomes(value: Any, name: str) -> np.ndarray:
    # as_1d flattens a (1, n) or (n, 1) array; here rows vs items is ambiguous: refused
    shape = np.shape(value.to_numpy() if hasattr(value, "to_numpy") else value)
    if len(shape) != 1:
        raise InputError.bad(name, "a 1-dimensional array of outcomes (one per item)", value)
    arr = as_1d(value, name)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iuf" and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise InputError.bad(name, "boolean outcomes (True/False or 0/1)", value)


def paired_comparison(
    first: Any,
    second: Any,
    *,
    exact: bool = True,
    correction: bool = True,
    confidence_level: float = 0.95,
) -> PairedComparison:
    """Compare two conditions on the same items: success rates and McNemar's test.

    ``first[i]`` and ``second[i]`` are the outcomes of item i under the two conditions (e.g. a
    model combination and the strong model alone on one task). The table is
    ``[[both, first only], [second only, neither]]``; the test is :func:`mcnemar_test` on the
    discordant pairs (exact binomial, or chi-square with ``correction`` when ``exact=False``).
    Without discordant pairs there is nothing to test: p = 1 and statistic 0 (the summary says
    so). The rates' intervals are :func:`wilson_interval`.

    Parameters
    ----------
    first, second : 1-D array-like of bool (or 0/1)
        Paired outcomes, one per item, the same length (a 2-D array, even one row or one
        column, is refused).
    exact : bool, default True
    correction : bool, default True
        The continuity correction of the chi-square test (used when ``exact`` is False).
    confidence_level : float, default 0.95

    Returns
    -------
    PairedComparison

    >>> result = paired_comparison([1, 1, 1, 0, 1], [0, 0, 1, 0, 0])
    >>> result.table, result.p_value
    (((1, 3), (0, 1)), 0.25)
    """
    a = _paired_outcomes(first, "first")
    b = _paired_outcomes(second, "second")
    if len(b) != len(a):
        raise InputError.bad("second", f"{len(a)} outcomes (one per item of first)", len(b))
    exact = check_bool(exact, "exact")
    correction = check_bool(correction, "correction")
    level = check_probability(confidence_level, "confidence_level")
    table = (
        (int(np.sum(a & b)), int(np.sum(a & ~b))),
        (int(np.sum(~a & b)), int(np.sum(~a & ~b))),
    )
    only_first, only_second = table[0][1], table[1][0]
    if only_first + only_second == 0:
        statistic, p_value = 0.0, 1.0
    else:
        test = mcnemar_test(only_first, only_second, exact, correction=correction)
        statistic, p_value = test.statistic, test.p_value
    n = len(a)
    k1, k2 = int(a.sum()), int(b.sum())
    return PairedComparison(
        table=table,
        rate_first=k1 / n,
        rate_second=k2 / n,
        interval_first=wilson_interval(k1, n, level),
        interval_second=wilson_interval(k2, n, level),
        p_value=float(p_value),
        statistic=float(statistic),
        method=_mcnemar_method(exact, correction),
        n=n,
        confidence_level=level,
    )


def wilson_interval(
    successes: int, trials: int, confidence_level: float = 0.95
) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion.

    With z the two-sided normal quantile of ``confidence_level`` and p = k / n:
    (k + z^2/2) / (n + z^2) -/+ z sqrt(n) / (n + z^2) sqrt(p (1 - p) + z^2 / (4 n)), the
    proportions p0 whose score test |p - p0| / sqrt(p0 (1 - p0) / n) <= z. It stays inside
    [0, 1]; its ends are exactly 0 for k = 0 and 1 for k = n.

    >>> [round(x, 4) for x in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    n = check_positive_int(trials, "trials")
    k = check_positive_int(successes, "successes", minimum=0)
    if k > n:
        raise InputError.bad("successes", f"at most trials = {n}", k)
    level = check_probability(confidence_level, "confidence_level")
    z = float(stats.norm.isf((1.0 - level) / 2.0))
    p = k / n
    centre = (k + z * z / 2.0) / (n + z * z)
    half = z * math.sqrt(n) / (n + z * z) * math.sqrt(p * (1.0 - p) + z * z / (4.0 * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


# --------------------------------------------------------------------------- bootstrap


def cluster_bootstrap_ci(
    values: Any,
    clusters: Any,
    groups: Any = None,
    n_bootstrap: int = 2000,
    confidence_level: float = 0.95,
    random_state: Any = None,
) -> ClusterInterval:
    """Percentile interval of a mean (or a difference of two group means) resampling clusters.

    Whole clusters are drawn with replacement (all their observations together), so
    observations that are correlated within a cluster (votes on one item) are not counted as
    independent. Without ``groups`` the statistic is the mean of ``values``; with boolean
    ``groups`` it is mean(values[groups]) - mean(values[~groups]) (both computed from the same
    resampled clusters). Each group's observations must lie in at least 2 clusters: a group held
    by one cluster has the same mean in every resample, so its variation could not reach the
    interval (:class:`~trustlab.errors.InputError`).
    """
    y = as_float_array(values, "values", ndim=1)
    labels = as_1d(clusters, "clusters")
    check_same_length(values=y, clusters=labels)
    B = check_positive_int(n_bootstrap, "n_bootstrap", minimum=10)
    level = check_probability(confidence_level, "confidence_level")
    rng = check_random_state(random_state)
    _, index = np.unique(labels, return_inverse=True)
    k = int(index.max()) + 1
    if k < 2:
        raise InputError.bad("clusters", "at least 2 distinct clusters", labels)
    if groups is None:
        masks = [np.ones(len(y), dtype=bool)]
    else:
        g = as_1d(groups, "groups")
        check_same_length(values=y, groups=g)
        if g.dtype != bool:
            raise InputError.bad("groups", "booleans (True: the first group)", g)
        masks = [g, ~g]
    sums = [np.bincount(index, weights=y * m, minlength=k) for m in masks]
    sizes = [np.bincount(index, weights=m.astype(float), minlength=k) for m in masks]
    if any(s.sum() == 0 for s in sizes):
        raise InputError.bad("groups", "observations in both groups", "an empty group")
    # a group held by one cluster has the same mean in every resample that draws it: its
    # variance would be left out of the interval (2 clusters, one per group: [d, d], SE 0)
    spread = [int(np.count_nonzero(s)) for s in sizes]
    if len(spread) == 2 and min(spread) < 2:
        which = "first (True)" if spread[0] < 2 else "second (False)"
        raise InputError.bad(
            "groups",
            "each group's observations in at least 2 clusters (a cluster bootstrap cannot see "
            "the variation of a group held by one cluster)",
            f"the {which} group in 1 cluster",
        )

    def statistic(weights: np.ndarray) -> np.ndarray:
        means = [(weights @ s) / (weights @ n) for s, n in zip(sums, sizes, strict=True)]
        return means[0] if len(means) == 1 else means[0] - means[1]

    estimate = float(statistic(np.ones(k)))
    draws = rng.multinomial(k, np.full(k, 1.0 / k), size=B).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = statistic(draws)
    samples = samples[np.isfinite(samples)]  # a resample without one group has no difference
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return ClusterInterval(
        estimate, float(low), float(high), float(np.std(samples, ddof=1)), level, k, B
    )


# --------------------------------------------------------------------------- power


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)).

    >>> round(cohens_h(0.65, 0.23), 5)
    0.87513
    """
    a = check_in_range(p1, "p1", 0.0, 1.0)
    b = check_in_range(p2, "p2", 0.0, 1.0)
    return 2.0 * math.asin(math.sqrt(a)) - 2.0 * math.asin(math.sqrt(b))


def _effect_size(value: Any) -> float:
    """A finite standardised effect size (float() let NaN through, and a text or None escaped
    as a bare ValueError or TypeError)."""
    return check_in_range(value, "effect_size", -math.inf, math.inf, low_open=True, high_open=True)


def _two_tailed(shift: float, crit: float) -> float:
    return float(stats.norm.sf(crit - shift) + stats.norm.cdf(-crit - shift))


def normal_power(effect_size: float, n: float, alpha: float = 0.05, ratio: float = 1.0) -> float:
    """Power of a two-sided z-test of standardised effect ``effect_size`` with ``n`` in the
    first group and ``ratio * n`` in the second (``ratio`` 0: a one-sample test), both tails
    counted (statsmodels' ``NormalIndPower().power``).

    >>> round(normal_power(0.86304, 21), 5)
    0.79859
    """
    h = _effect_size(effect_size)
    n = check_positive(n, "n")
    alpha = check_probability(alpha, "alpha")
    ratio = check_in_range(ratio, "ratio", 0.0, math.inf, high_open=True)
    effective = n if ratio == 0 else n / (1.0 + 1.0 / ratio)
    return _two_tailed(abs(h) * math.sqrt(effective), stats.norm.isf(alpha / 2.0))


def _solve_n(power_of_n, target: float, start: float, low: float = 1e-6) -> float:
    """The n where the increasing ``power_of_n`` reaches ``target`` (bracketed above ``low``)."""
    if power_of_n(low) >= target:
        return low
    high = max(2.0 * start, 4.0 * low)
    while power_of_n(high) < target:
        high *= 4.0
        if high > MAX_N:
            raise InputError.bad("power", f"a power reachable below n = {MAX_N:.0e}", target)
    return float(optimize.brentq(lambda n: power_of_n(n) - target, low, high, xtol=1e-12))


def normal_sample_size(
    effect_size: float, alpha: float = 0.05, power: float = 0.8, ratio: float = 1.0
) -> float:
    """The (real-valued) n of the first group at which :func:`normal_power` reaches ``power``
    (statsmodels' ``NormalIndPower().solve_power``); round it up for a design.

    >>> round(normal_sample_size(0.8), 4)
    24.5277
    """
    h = _effect_size(effect_size)
    if h == 0:
        raise InputError.bad("effect_size", "a finite non-zero effect size", effect_size)
    power = check_probability(power, "power")
    alpha = check_probability(alpha, "alpha")
    ratio = check_in_range(ratio, "ratio", 0.0, math.inf, high_open=True)
    z = stats.norm.isf(alpha / 2.0) + stats.norm.ppf(power)
    start = (1.0 if ratio == 0 else 1.0 + 1.0 / ratio) * (z / h) ** 2
    return _solve_n(lambda n: normal_power(h, n, alpha, ratio), power, start)


def _unpooled_sds(p1: float, p2: float, ratio: float) -> tuple[float, float]:
    pooled = (p1 + ratio * p2) / (1.0 + ratio)
    null = math.sqrt(pooled * (1 - pooled) * (1.0 + 1.0 / ratio))
    alternative = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2) / ratio)
    return null, alternative


def _paired_effect(p1: float, p2: float, discordant: float | None) -> float:
    psi = p1 * (1 - p2) + p2 * (1 - p1) if discordant is None else discordant
    spread = psi - (p1 - p2) ** 2
    if spread <= 0 and discordant is None:  # p1, p2 = 0 and 1: every pair differs by the same
        raise InputError.bad(
            "p2",
            f"not {1 - p1:g} with p1 = {p1:g} in the paired design (every pair's difference "
            f"would be {p1 - p2:g}: no variance to test)",
            p2,
        )
    if spread <= 0:
        raise InputError.bad(
            "discordant", f"a discordant share above (p1 - p2)^2 = {(p1 - p2) ** 2:.4g}", psi
        )
    return (p1 - p2) / math.sqrt(spread)


def _design_power(p1, p2, n, alpha, design, ratio, discordant) -> float:
    if design == "independent":
        return normal_power(cohens_h(p1, p2), n, alpha, ratio)
    if design == "one-sample":
        return normal_power(cohens_h(p1, p2), n, alpha, 0.0)
    if design == "unpooled":
        sd_null, sd_alt = _unpooled_sds(p1, p2, ratio)
        crit = stats.norm.isf(alpha / 2.0)
        d = abs(p1 - p2) * math.sqrt(n)
        if sd_alt == 0:  # p1, p2 = 1, 0: the statistic is fixed, the power a step, 0 or 1
            # (statsmodels' power_proportions_2indep gives NaN with warnings; at the step's edge
            # d = crit * sd_null the divisions gave 0/0 = NaN)
            return float(d > crit * sd_null)
        return float(
            stats.norm.sf((crit * sd_null - d) / sd_alt)
            + stats.norm.cdf((-crit * sd_null - d) / sd_alt)
        )
    d = abs(_paired_effect(p1, p2, discordant))  # paired t on the within-pair difference
    df = n - 1.0
    crit = stats.t.isf(alpha / 2.0, df)
    nc = d * math.sqrt(n)
    # the lower tail P(T < -crit) as P(T > crit) at -nc: scipy's nct.cdf far in the left tail is
    # NaN for some (df, nc) (df 1, nc 8; df 2, nc 9.8), where this gives 0 to within 1e-15
    return float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))


def _design_inputs(p1, p2, alpha, design, ratio, discordant):
    p1 = check_in_range(p1, "p1", 0.0, 1.0)
    p2 = check_in_range(p2, "p2", 0.0, 1.0)
    if p1 == p2:
        raise InputError.bad("p2", f"a proportion different from p1 = {p1:g}", p2)
    alpha = check_probability(alpha, "alpha")
    check_choice(design, "design", DESIGNS)
    ratio = check_positive(ratio, "ratio")
    if discordant is not None:
        discordant = check_in_range(discordant, "discordant", 0.0, 1.0, low_open=True)
    return p1, p2, alpha, ratio, discordant


def achieved_power(
    p1: float,
    p2: float,
    n: float,
    alpha: float = 0.05,
    design: str = "independent",
    ratio: float = 1.0,
    discordant: float | None = None,
) -> float:
    """Power of the two-sided test of p1 vs p2 with ``n`` per group (pairs for "paired").

    Designs (:data:`DESIGNS`): "independent" (pooled z on Cohen's h; statsmodels'
    ``NormalIndPower``), "unpooled" (the null variance pooled, the alternative's unpooled;
    statsmodels' ``power_proportions_2indep``), "one-sample" (p1 against the fixed reference
    p2, e.g. 0.5), "paired" (paired t test of the within-pair difference of two binary
    outcomes: effect (p1 - p2) / sqrt(psi - (p1 - p2)^2), psi the ``discordant`` share, by
    default p1 (1 - p2) + p2 (1 - p1) as if the two outcomes of a pair were independent).
    """
    p1, p2, alpha, ratio, discordant = _design_inputs(p1, p2, alpha, design, ratio, discordant)
    n = check_positive(n, "n")
    if design == "paired" and n < 2:
        raise InputError.bad("n", "at least 2 pairs for the paired design", n)
    return _design_power(p1, p2, n, alpha, design, ratio, discordant)


def sample_size(
    p1: float,
    p2: float,
    alpha: float = 0.05,
    power: float = 0.8,
    design: str = "independent",
    ratio: float = 1.0,
    discordant: float | None = None,
) -> SampleSize:
    """Observations per group (pairs for "paired") to detect p1 vs p2 with a two-sided test.

    "independent": n = (1 + 1/ratio) ((z_{1-alpha/2} + z_{1-beta}) / h)^2 solved with both
    tails counted (statsmodels' ``NormalIndPower().solve_power``); "unpooled": the Fleiss form
    n = [z_{1-alpha/2} sd_null + z_{1-beta} sd_alt]^2 / (p1 - p2)^2 (statsmodels'
    ``samplesize_proportions_2indep_onetail``); "one-sample": p1 against the reference p2;
    "paired": the paired t test (statsmodels' ``TTestPower``). See :func:`achieved_power`.

    >>> sample_size(0.65, 0.23).n_required
    21
    """
    p1, p2, alpha, ratio, discordant = _design_inputs(p1, p2, alpha, design, ratio, discordant)
    power = check_probability(power, "power")
    z_alpha, z_power = stats.norm.isf(alpha / 2.0), stats.norm.ppf(power)
    if design == "independent":
        effect = cohens_h(p1, p2)
        n = normal_sample_size(effect, alpha, power, ratio)
    elif design == "one-sample":
        effect = cohens_h(p1, p2)
        n = normal_sample_size(effect, alpha, power, 0.0)
    elif design == "unpooled":
        effect = p1 - p2
        sd_null, sd_alt = _unpooled_sds(p1, p2, ratio)
        n = ((z_alpha * sd_null + z_power * sd_alt) / effect) ** 2
    else:
        effect = _paired_effect(p1, p2, discordant)
        start = ((z_alpha + z_power) / effect) ** 2 + 2.0
        n = _solve_n(
            lambda k: _design_power(p1, p2, k, alpha, design, ratio, discordant), power, start, 2.0
        )
    n_required = int(math.ceil(round(n, 9)))
    achieved = _design_power(p1, p2, n_required, alpha, design, ratio, discordant)
    if achieved < power and design == "unpooled" and sd_alt == 0:  # n rounded onto the step's
        n_required += 1  # edge (p1, p2 = 1, 0; alpha 2 sf(2): n = 2.000...2): power 0 there
        achieved = _design_power(p1, p2, n_required, alpha, design, ratio, discordant)
    return SampleSize(
        design, p1, p2, alpha, power, ratio, effect, n, n_required, achieved, discordant
    )

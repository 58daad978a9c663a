"""trustlab.evaluation.statistics against statsmodels and scipy (the oracles)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import (
    power_proportions_2indep,
    proportion_effectsize,
    proportions_ztest,
    samplesize_proportions_2indep_onetail,
)

from trustlab.errors import InputError
from trustlab.evaluation.statistics import (
    achieved_power,
    cluster_bootstrap_ci,
    cohens_h,
    mcnemar_test,
    normal_power,
    normal_sample_size,
    per_item_ztests,
    sample_size,
    two_proportion_ztest,
    wilcoxon_signed_rank,
)

SCIPY_ALTERNATIVE = {"two-sided": "two-sided", "larger": "greater", "smaller": "less"}


@settings(max_examples=60, deadline=None)
@given(
    n1=st.integers(2, 5000),
    n2=st.integers(2, 5000),
    f1=st.floats(0.01, 0.99),
    f2=st.floats(0.01, 0.99),
    alternative=st.sampled_from(["two-sided", "larger", "smaller"]),
)
def test_pooled_ztest_equals_statsmodels(n1, n2, f1, f2, alternative):
    k1, k2 = round(f1 * n1), round(f2 * n2)
    if k1 + k2 in (0, n1 + n2):
        return
    ours = two_proportion_ztest([k1, k2], [n1, n2], alternative)
    z, p = proportions_ztest([k1, k2], [n1, n2], alternative=alternative)
    assert ours.statistic == pytest.approx(z, rel=1e-9, abs=1e-12)
    assert ours.p_value == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_the_spec_pooled_context_effect():
    # the paper's pooled numbers: 0.6484 vs 0.2337 of 9,450 votes each, z = 57.41
    k1, k2 = round(0.6484 * 9450), round(0.2337 * 9450)
    assert two_proportion_ztest([k1, k2], [9450, 9450]).statistic == pytest.approx(57.41, abs=0.02)


def test_per_item_ztests_equal_statsmodels_one_by_one():
    rng = np.random.default_rng(0)
    k1, k2 = rng.integers(0, 22, 40), rng.integers(0, 22, 40)
    k1[0] = k2[0] = 0  # no variance: NaN, never significant
    tests = per_item_ztests(k1, np.full(40, 21), k2, np.full(40, 21))
    assert np.isnan(tests.statistics[0]) and np.isnan(tests.p_values[0])
    for i in range(1, 40):
        z, p = proportions_ztest([k1[i], k2[i]], [21, 21])
        assert tests.statistics[i] == pytest.approx(z, rel=1e-9)
        assert tests.p_values[i] == pytest.approx(p, rel=1e-9)
    expected = sum(1 for i in range(1, 40) if proportions_ztest([k1[i], k2[i]], [21, 21])[1] < 0.05)
    assert tests.n_significant(0.05) == expected


def _scipy_r_plus(x, axis):
    """scipy's signed-rank statistic of the positive differences (zeros dropped), along ``axis``."""
    return stats.wilcoxon(x, alternative="greater", method="asymptotic", axis=axis).statistic


def _scipy_wilcoxon(d: np.ndarray, alternative: str) -> tuple[float, float]:
    """``stats.wilcoxon(d, alternative=...)``: statistic and p-value, the same numbers.

    For up to 13 differences with ties or zeros scipy's "auto" runs ``permutation_test`` over
    all 2**n sign patterns with its statistic computed one pattern at a time (seconds for 13);
    here the same ``permutation_test`` gets the same statistic vectorized, so the same null
    distribution and p-value. The statistic does not depend on the method.
    """
    scipy_alternative = SCIPY_ALTERNATIVE[alternative]
    if len(d) > 13 or ((d != 0).all() and len(np.unique(np.abs(d))) == len(d)):
        result = stats.wilcoxon(d, alternative=scipy_alternative)
        return result.statistic, result.pvalue
    statistic = stats.wilcoxon(d, alternative=scipy_alternative, method="asymptotic").statistic
    p_value = stats.permutation_test(
        (d,), _scipy_r_plus, permutation_type="samples", vectorized=True,
        alternative=scipy_alternative,
    ).pvalue  # fmt: skip
    return statistic, p_value


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(-6, 6), min_size=3, max_size=120),
    alternative=st.sampled_from(["two-sided", "larger", "smaller"]),
    scale=st.sampled_from([1.0, 0.37]),
)
def test_wilcoxon_equals_scipy_with_ties_and_zeros(values, alternative, scale):
    d = np.asarray(values, dtype=float) * scale
    if not (d != 0).any():
        return
    ours = wilcoxon_signed_rank(d, alternative)
    statistic, p_value = _scipy_wilcoxon(d, alternative)
    assert ours.statistic == pytest.approx(statistic, rel=1e-9)
    assert ours.p_value == pytest.approx(p_value, rel=1e-9, abs=1e-300)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 50), seed=st.integers(0, 10_000), shift=st.floats(-1, 1))
def test_exact_wilcoxon_equals_scipy(n, seed, shift):
    d = np.random.default_rng(seed).normal(shift, 1, n)
    for alternative in ("two-sided", "larger", "smaller"):
        ours = wilcoxon_signed_rank(d, alternative, method="exact")
        theirs = stats.wilcoxon(d, alternative=SCIPY_ALTERNATIVE[alternative], method="exact")
        assert ours.statistic == theirs.statistic
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)


def _enumerated_p(d: np.ndarray, alternative: str) -> float:
    """The signed-rank p-value by brute force: every sign pattern of the ranks is equally likely
    under H0 (the oracle; independent of scipy's code paths)."""
    d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    signs = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1
    totals = signs @ ranks
    upper = np.mean(totals >= observed - 1e-9)
    lower = np.mean(totals <= observed + 1e-9)
    return {"larger": upper, "smaller": lower, "two-sided": min(1.0, 2 * min(upper, lower))}[
        alternative
    ]


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.integers(-5, 5), min_size=2, max_size=12),
    alternative=st.sampled_from(["two-sided", "larger", "smaller"]),
)
def test_small_sample_wilcoxon_equals_the_enumeration_of_sign_patterns(values, alternative):
    d = np.asarray(values, dtype=float)
    if not (d != 0).any() or (d == 0).any():
        return  # scipy's permutation keeps zeros in its pattern count; no zeros here
    result = wilcoxon_signed_rank(d, alternative)
    assert result.p_value == pytest.approx(_enumerated_p(d, alternative), rel=1e-9)
    assert result.n == len(d)


def test_exact_wilcoxon_refuses_ties():
    with pytest.raises(InputError, match="method"):
        wilcoxon_signed_rank([1.0, 1.0, 2.0], method="exact")


@pytest.mark.parametrize(("b", "c"), [(10, 3), (0, 7), (25, 31), (4, 4)])
def test_mcnemar_equals_statsmodels(b, c):
    from statsmodels.stats.contingency_tables import mcnemar

    table = [[11, b], [c, 5]]
    exact, chi2 = mcnemar_test(b, c), mcnemar_test(b, c, exact=False)
    assert exact.p_value == pytest.approx(mcnemar(table).pvalue, rel=1e-9)
    reference = mcnemar(table, exact=False, correction=False)
    assert chi2.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert chi2.p_value == pytest.approx(reference.pvalue, rel=1e-9)


# ---- power and sample size: the spec's cases --------------------------------------------------


@pytest.mark.parametrize(
    ("p1", "p2", "h", "expected", "ceiling"),
    [
        (None, None, 0.8, 24.5277, 25),
        (0.65, 0.23, None, 20.4971, 21),
        (0.6, 0.4, None, 96.7919, 97),
    ],
)
def test_sample_size_equals_normal_ind_power(p1, p2, h, expected, ceiling):
    h = cohens_h(p1, p2) if h is None else h
    reference = NormalIndPower().solve_power(h, alpha=0.05, power=0.8, ratio=1.0)
    ours = normal_sample_size(h, alpha=0.05, power=0.8)
    assert ours == pytest.approx(reference, rel=1e-6)
    assert ours == pytest.approx(expected, abs=1e-4)
    if p1 is not None:
        result = sample_size(p1, p2)
        assert result.n_required == ceiling == math.ceil(reference)
        assert result.power_at_n_required >= 0.8


def test_cohens_h_equals_statsmodels():
    for p1, p2 in [(0.65, 0.23), (0.648, 0.234), (0.1, 0.9), (0.5, 0.5)]:
        assert cohens_h(p1, p2) == pytest.approx(proportion_effectsize(p1, p2), rel=1e-12)


def test_power_at_21_votes():
    assert normal_power(0.86304, 21) == pytest.approx(0.79860, abs=1e-5)
    reference = NormalIndPower().power(0.86304, 21, 0.05)
    assert normal_power(0.86304, 21) == pytest.approx(reference, rel=1e-6)


def test_unpooled_power_equals_power_proportions_2indep():
    ours = achieved_power(0.6, 0.4, 100, design="unpooled")
    assert ours == pytest.approx(0.81229, abs=5e-6)
    assert ours == pytest.approx(power_proportions_2indep(0.2, 0.4, 100).power, rel=1e-6)


@pytest.mark.parametrize(("p1", "p2"), [(0.6, 0.4), (0.65, 0.23), (0.2, 0.35), (0.9, 0.7)])
def test_unpooled_sample_size_equals_statsmodels(p1, p2):
    reference = samplesize_proportions_2indep_onetail(p1 - p2, p2, 0.8, alpha=0.05)
    assert sample_size(p1, p2, design="unpooled").n == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize(("p1", "p0"), [(0.65, 0.5), (0.3, 0.5), (0.8, 0.6)])
def test_one_sample_equals_normal_ind_power_ratio_zero(p1, p0):
    h = cohens_h(p1, p0)
    reference = NormalIndPower().solve_power(h, alpha=0.05, power=0.8, ratio=0.0)
    assert sample_size(p1, p0, design="one-sample").n == pytest.approx(reference, rel=1e-6)
    power = NormalIndPower().power(h, 40, 0.05, ratio=0.0)
    assert achieved_power(p1, p0, 40, design="one-sample") == pytest.approx(power, rel=1e-6)


@pytest.mark.parametrize(("p1", "p2"), [(0.65, 0.23), (0.6, 0.4), (0.3, 0.55)])
def test_paired_equals_ttest_power(p1, p2):
    result = sample_size(p1, p2, design="paired")
    d = abs(p1 - p2) / math.sqrt(p1 * (1 - p2) + p2 * (1 - p1) - (p1 - p2) ** 2)
    reference = TTestPower().solve_power(d, alpha=0.05, power=0.8)
    assert result.n == pytest.approx(reference, rel=1e-6)
    power = TTestPower().power(d, 30, 0.05)
    assert achieved_power(p1, p2, 30, design="paired") == pytest.approx(power, rel=1e-6)


def test_power_inputs_are_checked():
    with pytest.raises(InputError, match="^design"):
        sample_size(0.6, 0.4, design="sequential")
    with pytest.raises(InputError, match="^p2"):
        sample_size(0.6, 0.6)
    with pytest.raises(InputError, match="^power"):
        sample_size(0.6, 0.4, power=1.2)


# ---- the cluster bootstrap ------------------------------------------------------------------


def test_cluster_bootstrap_se_matches_cluster_robust_ols():
    """The bootstrap SE of a difference of means ~ statsmodels' cluster-robust SE."""
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    n_clusters, size = 300, 21
    cluster_effect = rng.normal(0, 0.25, n_clusters)
    clusters = np.repeat(np.arange(n_clusters), 2 * size)
    groups = np.tile(np.r_[np.ones(size, bool), np.zeros(size, bool)], n_clusters)
    p = np.clip(0.45 + 0.3 * groups + cluster_effect[clusters], 0.02, 0.98)
    y = (rng.random(len(p)) < p).astype(float)
    ours = cluster_bootstrap_ci(y, clusters, groups, n_bootstrap=4000, random_state=0)
    X = sm.add_constant(groups.astype(float))
    fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    assert ours.estimate == pytest.approx(fit.params[1], rel=1e-12)
    assert ours.standard_error == pytest.approx(fit.bse[1], rel=0.08)
    assert ours.low < ours.estimate < ours.high


def test_cluster_bootstrap_is_wider_than_a_vote_bootstrap_when_votes_correlate():
    rng = np.random.default_rng(2)
    clusters = np.repeat(np.arange(60), 21)
    y = np.repeat(rng.random(60) < 0.5, 21).astype(float)  # every vote of an item agrees
    clustered = cluster_bootstrap_ci(y, clusters, random_state=0)
    single = cluster_bootstrap_ci(y, np.arange(len(y)), random_state=0)
    assert clustered.high - clustered.low > 3 * (single.high - single.low)


def test_cluster_bootstrap_is_seeded():
    y = np.random.default_rng(3).random(200)
    clusters = np.repeat(np.arange(20), 10)
    assert cluster_bootstrap_ci(y, clusters, random_state=5) == cluster_bootstrap_ci(
        y, clusters, random_state=5
    )

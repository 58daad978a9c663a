"""Certificates from counts: Clopper-Pearson bounds, the radii and their confidence budget.

Oracles: statsmodels' ``proportion_confint(method="beta")``, SciPy's Beta and normal quantiles
(the spec's formulas written out independently here) and the spec's reference values.
"""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from trustlab.errors import InputError
from trustlab.robustness import (
    DatasetCertificate,
    certify_counts,
    check_cost_matrix,
    clopper_pearson_lower,
    clopper_pearson_upper,
    make_cost_matrix,
)

SIGMA, ALPHA, N = 0.5, 1e-3, 100_000


def lower(k, n, a):
    return 0.0 if k == 0 else stats.beta.ppf(a, k, n - k + 1)


def upper(k, n, a):
    return 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)


def padded(*counts, classes=10):
    return list(counts) + [0] * (classes - len(counts))


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 200_000),
    fraction=st.floats(0, 1),
    a=st.floats(1e-7, 0.25),
)
def test_clopper_pearson_bounds_equal_statsmodels(n, fraction, a):
    k = int(round(fraction * n))
    low, high = proportion_confint(k, n, alpha=2 * a, method="beta")
    assert abs(clopper_pearson_lower(k, n, a) - low) <= 1e-12
    assert abs(clopper_pearson_upper(k, n, a) - high) <= 1e-12
    assert abs(clopper_pearson_lower(k, n, a) - lower(k, n, a)) <= 1e-12


def test_clopper_pearson_bounds_match_the_spec_reference_values():
    assert clopper_pearson_lower(99_000, 100_000, 0.001) == pytest.approx(
        0.9889893403774748, abs=1e-12
    )
    assert clopper_pearson_upper(99_000, 100_000, 0.001) == pytest.approx(
        0.9909445314129196, abs=1e-12
    )
    assert clopper_pearson_lower(0, 100, 0.001) == 0.0
    assert clopper_pearson_upper(0, 100, 0.001) == pytest.approx(0.0667456992, abs=1e-10)
    assert clopper_pearson_lower(523, 1000, 0.0005) == pytest.approx(0.4705087567, abs=1e-10)
    assert clopper_pearson_upper(523, 1000, 0.0005) == pytest.approx(0.5751404060, abs=1e-10)


def test_clopper_pearson_bounds_are_vectorised():
    k = np.array([0, 5, 10])
    assert np.allclose(clopper_pearson_lower(k, 10, 0.01), [lower(v, 10, 0.01) for v in k])
    assert np.allclose(clopper_pearson_upper(k, 10, 0.01), [upper(v, 10, 0.01) for v in k])


@pytest.mark.parametrize("n_top", [49_000, 50_001, 60_000, 99_999])
def test_standard_radius_equals_cohen_formula_for_identical_counts(n_top):
    counts = padded(n_top, N - n_top, classes=3)
    cert = certify_counts(counts, 0, 0, sigma=SIGMA, alpha=ALPHA)
    p = lower(n_top, N, ALPHA)
    expected = SIGMA * stats.norm.ppf(p) if p > 0.5 else 0.0
    assert cert.radius_std == pytest.approx(expected, abs=1e-12)
    assert cert.abstain == (p <= 0.5)


def expected_radii(counts, top, harmful, sigma=SIGMA, alpha=ALPHA):
    """The spec's Certify_Group written out with SciPy, with the correct alpha / (2 |Omega|)."""
    n = sum(counts)
    p_low = lower(counts[top], n, alpha / 2)
    p_up = {j: upper(counts[j], n, alpha / (2 * len(harmful))) for j in harmful}
    group = sigma / 2 * (stats.norm.ppf(p_low) - stats.norm.ppf(max(p_up.values())))
    p_std = lower(counts[top], n, alpha)
    std = sigma * stats.norm.ppf(p_std) if p_std > 0.5 else 0.0
    split_std = sigma * stats.norm.ppf(p_low)
    pairs = {
        j: sigma / 2 * (stats.norm.ppf(p_low) - stats.norm.ppf(min(p, 1 - p_low)))
        for j, p in p_up.items()
    }
    return std, group, max(group, split_std), pairs


@pytest.mark.parametrize(
    "counts, harmful",
    [
        (padded(60_000, 30_000, 10_000), [1]),
        (padded(45_000, 40_000, 10_000, 5_000), [2, 3]),
        (padded(45_000, 40_000, 10_000, 5_000), [1]),
        (padded(70_000, 20_000, 5_000, 5_000), list(range(1, 10))),
    ],
)
def test_count_level_certificates_match_closed_form(counts, harmful):
    costs = make_cost_matrix(10, {0: harmful})
    cert = certify_counts(counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=costs)
    std, group, combined, pairs = expected_radii(counts, 0, harmful)
    assert cert.radius_std == pytest.approx(std, abs=1e-9)
    assert cert.radius_cs == pytest.approx(max(group, 0.0), abs=1e-9)
    assert cert.radius == pytest.approx(combined, abs=1e-9)
    assert cert.pair_radii == pytest.approx(pairs, abs=1e-9)
    assert cert.radius_cs >= cert.radius_std
    if cert.p_lower_std <= 0.5:
        assert cert.radius_std == 0.0 and cert.abstain


@pytest.mark.parametrize(
    "counts, harmful",
    [
        (padded(N), [1]),  # every sample on A: only the confidence budget differs
        (padded(90_000, 10_000, classes=3), [1]),  # all other mass on the one harmful class
    ],
)
def test_group_radius_from_split_bounds_can_fall_below_cohens(counts, harmful):
    """The ordering r_cs >= r_std is a statement about probabilities (test_closed_form.py), not
    about the Monte Carlo certificates: the group radius spends alpha / 2 on p_A and the rest on
    the harmful bounds, so where comparing with Omega gains nothing it comes out below Cohen's
    radius at alpha. The combined ``radius`` caps each bound at 1 - p_lower and so never falls
    below Cohen's radius at alpha / 2."""
    costs = make_cost_matrix(len(counts), {0: harmful})
    cert = certify_counts(counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=costs)
    std, group, combined, _ = expected_radii(counts, 0, harmful)
    assert cert.radius_cs == pytest.approx(group, abs=1e-9)
    assert cert.radius_std == pytest.approx(std, abs=1e-9)
    assert cert.radius_cs < cert.radius_std
    assert cert.radius == pytest.approx(combined, abs=1e-9)
    assert cert.radius >= SIGMA * stats.norm.ppf(lower(counts[0], N, ALPHA / 2)) - 1e-12


def test_bonferroni_split_is_alpha_over_twice_omega_not_the_authors_precedence():
    counts, harmful = padded(45_000, 40_000, 10_000, 5_000), [2, 3]
    cert = certify_counts(
        counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=make_cost_matrix(10, {0: harmful})
    )
    p_low = lower(45_000, N, ALPHA / 2)
    authors = SIGMA / 2 * (stats.norm.ppf(p_low) - stats.norm.ppf(upper(10_000, N, ALPHA / 2 * 2)))
    correct = SIGMA / 2 * (stats.norm.ppf(p_low) - stats.norm.ppf(upper(10_000, N, ALPHA / 4)))
    assert cert.radius_cs == pytest.approx(correct, abs=1e-12)
    assert cert.radius_cs < authors  # (alpha/2)*|Omega| is anti-conservative for |Omega| > 1


def test_single_target_split_equals_the_authors_version():
    counts = padded(60_000, 30_000, 10_000)
    cert = certify_counts(
        counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=make_cost_matrix(10, {0: [1]})
    )
    p_low = lower(60_000, N, ALPHA / 2)
    authors = SIGMA / 2 * (stats.norm.ppf(p_low) - stats.norm.ppf(upper(30_000, N, ALPHA / 2)))
    assert cert.radius_cs == pytest.approx(authors, abs=1e-12)


def test_no_certificate_when_the_top_class_is_harmful():
    costs = make_cost_matrix(10, {3: [8, 5]})
    cert = certify_counts(padded(0, 0, 0, 3_000, 0, 0, 0, 0, 7_000), 8, 3, sigma=SIGMA,
                          alpha=ALPHA, cost_matrix=costs)  # fmt: skip
    assert cert.top_is_harmful and not cert.cs_certified
    assert cert.radius == 0.0 and cert.radius_cs == 0.0
    assert not cert.cs_robust_at(0.0)
    assert cert.worst_cost_at(0.0) == 1.0
    assert cert.std_robust_at(0.0)  # Cohen certifies the (wrong, harmful) prediction 8


def test_cost_sensitive_certificate_where_cohen_abstains():
    # p_A about 0.42: Cohen abstains, but the harmful class is rare.
    counts = padded(4_200, 3_900, 1_850, 50, classes=4)
    costs = make_cost_matrix(4, {0: [3]})
    cert = certify_counts(counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=costs)
    assert cert.abstain and cert.radius_std == 0.0
    assert cert.cs_certified and cert.radius > 0.3


def test_label_without_harmful_target_is_unbounded():
    costs = make_cost_matrix(3, {0: [1]})
    cert = certify_counts([10, 700, 290], 1, 1, sigma=SIGMA, alpha=ALPHA, cost_matrix=costs)
    assert cert.harmful == () and cert.radius == np.inf and cert.cs_robust_at(100.0)
    data = json.loads(json.dumps(cert.to_dict(), allow_nan=False))
    assert data["radius"] is None and data["targets"] == []


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 5_000), min_size=3, max_size=6).filter(lambda c: sum(c) > 0),
    data=st.data(),
)
def test_radii_are_ordered_and_consistent(counts, data):
    k = len(counts)
    top = data.draw(st.integers(0, k - 1))
    others = [j for j in range(k) if j != top]
    harmful = data.draw(st.lists(st.sampled_from(others), min_size=1, unique=True))
    costs = make_cost_matrix(k, {top: harmful})
    cert = certify_counts(counts, top, top, sigma=SIGMA, alpha=0.01, cost_matrix=costs)
    # The combined certificate dominates the group radius and the split-budget Cohen radius.
    split_std = SIGMA * stats.norm.ppf(cert.p_lower) if cert.p_lower > 0 else -np.inf
    assert cert.radius >= cert.radius_cs - 1e-12
    assert cert.radius >= max(split_std, 0.0) - 1e-12
    # It is the smallest pair radius: every pair certificate holds with it.
    assert cert.radius == pytest.approx(min(cert.pair_radii.values()), abs=1e-12)
    # A larger harmful set never certifies more.
    if len(harmful) < len(others):
        extra = next(j for j in others if j not in harmful)
        more = make_cost_matrix(k, {top: [*harmful, extra]})
        wider = certify_counts(counts, top, top, sigma=SIGMA, alpha=0.01, cost_matrix=more)
        assert wider.radius <= cert.radius + 1e-12


def test_worst_cost_with_real_valued_costs_matches_brute_force():
    costs = np.zeros((4, 4))
    costs[0] = [0, 1.0, 10.0, 3.0]
    counts = [7_000, 2_000, 100, 900]
    cert = certify_counts(counts, 0, 0, sigma=SIGMA, alpha=ALPHA, cost_matrix=costs)
    _, _, _, pairs = expected_radii(counts, 0, [1, 2, 3])
    for eps in np.linspace(0, 1.5, 31):
        exposed = [costs[0, j] for j, r in pairs.items() if not (r > 0 and r >= eps)]
        assert cert.worst_cost_at(eps) == max(exposed, default=0.0)
    # The cheap target is excluded least far (most likely), the costly one farthest.
    assert cert.pair_radii[1] < cert.pair_radii[3] < cert.pair_radii[2]


def test_dataset_from_counts_equals_pointwise_certificates():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(2_000, [0.5, 0.3, 0.15, 0.05], size=30)
    tops = counts.argmax(axis=1)
    labels = rng.integers(0, 4, size=30)
    costs = make_cost_matrix(4, {0: [3], 1: [2, 3], 2: [0]})
    result = DatasetCertificate.from_counts(
        tops, counts, labels, sigma=0.25, alpha=0.01, cost_matrix=costs
    )
    for i in range(30):
        single = certify_counts(counts[i], tops[i], labels[i], sigma=0.25, alpha=0.01,
                                cost_matrix=costs)  # fmt: skip
        assert result.certificate(i) == single


def test_wrong_cost_matrix_shape_is_refused():
    with pytest.raises(InputError, match=r"cost_matrix: expected a \(3, 3\) matrix"):
        check_cost_matrix(np.zeros((3, 4)), 3)


def test_negative_cost_is_refused():
    costs = np.zeros((3, 3))
    costs[1, 2] = -1
    with pytest.raises(
        InputError, match=r"cost_matrix: expected non-negative costs, got -1 at index \(1, 2\)"
    ):
        check_cost_matrix(costs, 3)


def test_nonzero_diagonal_is_refused():
    costs = np.eye(3)
    with pytest.raises(
        InputError, match=r"cost_matrix: expected 0 on the diagonal .*, got 1 at index \(0, 0\)"
    ):
        check_cost_matrix(costs, 3)


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.inf])
def test_non_positive_sigma_is_refused_by_certify_counts(sigma):
    with pytest.raises(InputError, match="sigma"):
        certify_counts([5, 5], 0, 0, sigma=sigma, alpha=0.01)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=0.6), "alpha"),
        (dict(counts=[5.5, 4.5]), "counts"),
        (dict(counts=[-1, 4]), "counts"),
        (dict(top_class=2), "top_class"),
        (dict(label=-1), "label"),
    ],
)
def test_bad_counts_level_input_names_the_argument(kwargs, argument):
    call = dict(counts=[5, 5], top_class=0, label=0, sigma=0.5, alpha=0.01) | kwargs
    with pytest.raises(InputError, match=rf"^{argument}: "):
        certify_counts(call.pop("counts"), call.pop("top_class"), call.pop("label"), **call)


def test_make_cost_matrix_refuses_self_pairs_and_unknown_classes():
    with pytest.raises(InputError, match="harmful"):
        make_cost_matrix(3, [(1, 1)])
    with pytest.raises(InputError, match="harmful"):
        make_cost_matrix(3, {0: [3]})


@pytest.mark.parametrize(
    "harmful",
    [{3: 8}, [3, 8], [(3, 8), 5], {3: None}, 7],
    ids=["target-not-a-list", "one-pair-unwrapped", "pair-not-a-pair", "no-targets", "int"],
)
def test_make_cost_matrix_refuses_malformed_pairs_with_an_input_error(harmful):
    # A bare target ({3: 8}) or an unwrapped pair ([3, 8]) raised TypeError tracebacks.
    with pytest.raises(InputError, match="harmful"):
        make_cost_matrix(10, harmful)


def test_certificates_csv_writes_an_infinite_radius_as_inf_not_blank(tmp_path):
    # Label 1 has no harmful target: its radius is inf (None in JSON); the CSV left it blank,
    # which reads back as "no certificate" (NaN).
    costs = make_cost_matrix(3, {0: [2]})
    result = DatasetCertificate.from_counts(
        [0, 1], [[900, 50, 50], [40, 950, 10]], [0, 1], sigma=0.5, alpha=0.001, cost_matrix=costs
    )
    path = tmp_path / "certificates.csv"
    result.files()["certificates.csv"].to_csv(path, index=False)
    table = pd.read_csv(path)
    assert np.isinf(table["radius"][1]) and np.isinf(table["radius_cs"][1])
    assert table["radius"][0] == pytest.approx(result.radius[0])
    assert not table[["radius", "radius_cs", "radius_std"]].isna().any().any()

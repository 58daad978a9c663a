"""Soundness on a closed form: an interval classifier with exact smoothed probabilities.

Every certified radius (from exact probabilities, and from Monte Carlo) is at most the true
radius found by a scan. With exact probabilities the cost-sensitive (group) radius is at least
the standard one (the paper's ordering: ``p_j <= 1 - p_A`` for every harmful ``j``); with
Monte Carlo bounds at the split confidence it need not be, which is why the combined
``radius`` caps the bounds (see test_stats.py).
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from interval_oracle import (
    SCAN_STEP,
    IntervalClassifier,
    exact_probabilities,
    true_cs_radius,
    true_std_radius,
)
from scipy import stats

from trustlab.robustness import SmoothedClassifier, certify_dataset, make_cost_matrix
from trustlab.robustness.bounds import radii_from_bounds, standard_radius

SPEC_THRESHOLDS = [0.0, 1.0, 1.5]  # t = (-inf, 0, 1, 1.5, inf)


def exact_radii(thresholds, s0, sigma, harmful):
    """The radii computed from the exact probabilities in place of the bounds."""
    p = exact_probabilities(thresholds, s0, sigma)
    top = int(np.argmax(p))
    mask = np.zeros((1, len(p)), dtype=bool)
    mask[0, list(harmful)] = True
    radii = radii_from_bounds(np.array([top]), np.array([p[top]]), p[None, :], mask, sigma)
    return top, p, radii


def exact_certificate(thresholds, s0, sigma, harmful):
    """The combined certificate and Cohen's radius from the exact probabilities."""
    top, p, radii = exact_radii(thresholds, s0, sigma, harmful)
    return top, p, float(radii["radius"][0]), float(standard_radius(p[top], sigma))


@pytest.mark.parametrize(
    "s0, harmful, std, cs, true",
    [
        (0.5, [3], 0.2376, 0.6188, 0.8432),
        (0.5, [2, 3], 0.2376, 0.3935, 0.6446),
        (1.2, [3], 0.0, 0.0744, 0.1432),
    ],
)
def test_exact_certificates_match_the_spec_reference(s0, harmful, std, cs, true):
    top, p, radius, radius_std = exact_certificate(SPEC_THRESHOLDS, s0, 0.5, harmful)
    assert radius_std == pytest.approx(std, abs=5e-4)
    # Exact probabilities: p_j <= 1 - p_A, so the cap is inactive and radius = group radius.
    group = 0.25 * (stats.norm.ppf(p[top]) - stats.norm.ppf(p[harmful].max()))
    assert radius == pytest.approx(group, abs=1e-12)
    assert radius == pytest.approx(cs, abs=5e-4)
    assert true_cs_radius(SPEC_THRESHOLDS, s0, 0.5, harmful) == pytest.approx(true, abs=5e-4)


def test_reference_point_with_top_probability_below_half_gets_a_cs_radius():
    top, p, radius, radius_std = exact_certificate(SPEC_THRESHOLDS, 1.2, 0.5, [3])
    assert p[top] < 0.5 and radius_std == 0.0 and radius > 0.07


@st.composite
def interval_problems(draw):
    k = draw(st.integers(3, 5))
    gaps = draw(st.lists(st.floats(0.05, 1.5), min_size=k - 2, max_size=k - 2))
    thresholds = np.cumsum([draw(st.floats(-1.0, 1.0)), *gaps])
    sigma = draw(st.floats(0.1, 1.0))
    s0 = draw(st.floats(thresholds[0] - 1.5, thresholds[-1] + 1.5))
    top = int(np.argmax(exact_probabilities(thresholds, s0, sigma)))
    others = [j for j in range(k) if j != top]
    harmful = draw(st.lists(st.sampled_from(others), min_size=1, unique=True))
    return thresholds, sigma, s0, top, harmful


@settings(max_examples=60, deadline=None)
@given(problem=interval_problems())
def test_exact_certificates_never_exceed_the_true_radius(problem):
    thresholds, sigma, s0, top, harmful = problem
    _, p, radius, radius_std = exact_certificate(thresholds, s0, sigma, harmful)
    assume(np.sort(p)[-1] - np.sort(p)[-2] > 1e-9)  # a well-defined top class
    # Probabilities that float64 can tell from 0 and 1 (else Phi^-1 is infinite).
    assume(p.max() < 1 - 1e-12 and p.min() > 1e-300)
    # Scanning up to the certificate suffices: no failure may occur below it.
    if radius > 0:
        limit = min(radius, 10.0) + 2 * SCAN_STEP
        assert radius <= true_cs_radius(thresholds, s0, sigma, harmful, limit) + SCAN_STEP
    if radius_std > 0:
        limit = radius_std + 2 * SCAN_STEP
        assert radius_std <= true_std_radius(thresholds, s0, sigma, top, limit) + SCAN_STEP


@settings(max_examples=100, deadline=None)
@given(problem=interval_problems())
def test_exact_group_radius_is_at_least_the_standard_radius(problem):
    """The uncapped cost-sensitive radius itself (not the combined ``radius``, which is the
    larger of the two by construction) against Cohen's, both from the exact probabilities."""
    thresholds, sigma, s0, top, harmful = problem
    _, p, radii = exact_radii(thresholds, s0, sigma, harmful)
    assume(np.sort(p)[-1] - np.sort(p)[-2] > 1e-9 and p.max() < 1 - 1e-12 and p.min() > 1e-300)
    group = float(radii["radius_cs"][0])
    expected = sigma / 2 * (stats.norm.ppf(p[top]) - stats.norm.ppf(p[harmful].max()))
    assert group == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # sigma/2 (Phi^-1(p_A) - Phi^-1(p_j)) >= sigma Phi^-1(p_A) as p_j <= 1 - p_A; and >= 0
    # (Cohen abstains) because A is the top class. Equality (one harmful class holding all of
    # 1 - p_A) is reached up to rounding: p_A is known to a relative eps, which moves
    # Phi^-1(p_A) by eps / phi(Phi^-1(p_A)) (a shortfall of 1.2e-9 was found at
    # p_A = 1 - 3.8e-10, sigma = 0.1, where this allows 3.8e-8).
    rounding = 4 * np.finfo(float).eps * sigma / stats.norm.pdf(stats.norm.ppf(p[top]))
    assert group >= float(standard_radius(p[top], sigma)) - rounding - 1e-12
    assert group >= 0.0


@pytest.mark.parametrize("gap", [0.05, 0.3, 1.0])
def test_exact_group_radius_equals_the_standard_radius_with_two_classes(gap):
    """The ordering is tight: with two classes the one other class holds all of 1 - p_A."""
    _, p, radii = exact_radii([0.2], 0.2 + gap, 0.4, [0])
    assert float(radii["radius_cs"][0]) == pytest.approx(standard_radius(p[1], 0.4), abs=1e-9)


@pytest.mark.parametrize("gap", [0.05, 0.3, 1.0, 2.0])
def test_standard_radius_is_tight_for_a_half_space(gap):
    sigma, threshold = 0.4, 0.2
    p = exact_probabilities([threshold], threshold + gap, sigma)
    assert standard_radius(p[1], sigma) == pytest.approx(gap, abs=1e-9)


def test_monte_carlo_certificates_are_sound_through_the_sampler():
    """2,000 certifications (independent noise streams) of the spec's point, n = 10,000."""
    classifier = IntervalClassifier(SPEC_THRESHOLDS, direction=[1.0, 2.0])
    smooth = SmoothedClassifier(classifier, sigma=0.5, n_classes=4, batch_size=20_000)
    repetitions, alpha, harmful = 2_000, 1e-3, [2, 3]
    X = np.repeat(classifier.point(0.5)[None], repetitions, axis=0)
    costs = make_cost_matrix(4, {1: harmful})
    result = certify_dataset(
        smooth, X, np.ones(repetitions, int), n0=100, n=10_000, alpha=alpha,
        cost_matrix=costs, random_state=7,
    )  # fmt: skip
    true_cs = true_cs_radius(SPEC_THRESHOLDS, 0.5, 0.5, harmful)
    true_std = true_std_radius(SPEC_THRESHOLDS, 0.5, 0.5, 1)
    # A failed certificate is one above the true radius; each fails with probability <= alpha.
    # Allowed: the 1 - 1e-6 quantile of Binomial(2000, alpha) (11 failures).
    allowed = stats.binom.ppf(1 - 1e-6, repetitions, alpha)
    assert np.sum(result.radius > true_cs) <= allowed
    assert np.sum(result.radius_std > true_std) <= allowed
    # On this point both certificates exist and the cost-sensitive one is the larger (exact
    # values 0.3935 and 0.2376; over the 2,000 repetitions the gap r_cs - r_std has mean 0.152,
    # sd 0.003, min 0.141: 0 is over 40 sd away).
    assert np.all(result.cs_certified) and np.all(result.radius_cs >= result.radius_std)
    assert np.all(result.radius_std > 0)

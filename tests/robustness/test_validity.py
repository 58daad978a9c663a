"""Statistical validity: over many repeated certifications of a fixed point, the share of
certificates above the true radius stays at most alpha.

A large alpha (0.1) gives the check power: in the tight case (a half-space, where Cohen's bound
is exact) failures really happen at nearly that rate, so an invalid bound would show. The margin
is the binomial one: the observed failures may not exceed the 1 - 1e-6 quantile of
Binomial(repetitions, alpha), a false alarm once in a million runs.
"""

import numpy as np
import pytest
from interval_oracle import IntervalClassifier, exact_probabilities, true_cs_radius, true_std_radius
from scipy import stats

from trustlab.robustness import (
    DatasetCertificate,
    SmoothedClassifier,
    certify_dataset,
    make_cost_matrix,
)

ALPHA = 0.1
FALSE_ALARM = 1e-6


def allowed_failures(repetitions, alpha=ALPHA):
    return stats.binom.ppf(1 - FALSE_ALARM, repetitions, alpha)


def repeated_certificates(thresholds, s0, sigma, label, harmful, n0, n, repetitions, seed):
    """Certificates of independent Monte-Carlo runs, drawing the counts from their exact law.

    For the interval classifier the label counts of n noisy samples are exactly
    Multinomial(n, p(s0)); selection and estimation counts are independent draws.
    """
    p = exact_probabilities(thresholds, s0, sigma)
    rng = np.random.default_rng(seed)
    tops = rng.multinomial(n0, p, size=repetitions).argmax(axis=1)
    counts = rng.multinomial(n, p, size=repetitions)
    costs = make_cost_matrix(len(p), {label: harmful})
    labels = np.full(repetitions, label)
    return DatasetCertificate.from_counts(
        tops, counts, labels, sigma=sigma, alpha=ALPHA, cost_matrix=costs, n0=n0
    )


def failures(result, true_cs, true_std_of):
    cs = int(np.sum(result.radius > true_cs))
    std_radius = np.where(result.abstain, 0.0, result.radius_std)
    true_of_class = {int(a): true_std_of(int(a)) for a in np.unique(result.top_classes)}
    true_std = np.array([true_of_class[int(a)] for a in result.top_classes])
    std = int(np.sum(std_radius > true_std))
    return cs, std


@pytest.mark.parametrize("n", [100, 10_000])
def test_failure_rate_at_most_alpha_in_the_tight_half_space(n):
    thresholds, sigma, s0, repetitions = [0.0], 0.5, 0.3, 4_000
    result = repeated_certificates(thresholds, s0, sigma, 1, [0], 20, n, repetitions, seed=n)
    true_cs = true_cs_radius(thresholds, s0, sigma, [0])
    cs, std = failures(result, true_cs, lambda a: true_std_radius(thresholds, s0, sigma, a))
    assert cs <= allowed_failures(repetitions)
    assert std <= allowed_failures(repetitions)
    # Power: Cohen's bound is nearly exact here, so failures do occur at a rate near alpha.
    assert std >= stats.binom.ppf(FALSE_ALARM, repetitions, ALPHA / 4)


@pytest.mark.parametrize(
    "s0, label, harmful",
    [(0.5, 1, [3]), (0.5, 1, [2, 3]), (1.2, 1, [3]), (0.9, 1, [0, 2, 3])],
)
def test_failure_rate_at_most_alpha_with_several_classes(s0, label, harmful):
    thresholds, sigma, repetitions = [0.0, 1.0, 1.5], 0.5, 3_000
    result = repeated_certificates(
        thresholds, s0, sigma, label, harmful, 50, 2_000, repetitions, seed=17
    )
    true_cs = true_cs_radius(thresholds, s0, sigma, harmful)
    cs, std = failures(result, true_cs, lambda a: true_std_radius(thresholds, s0, sigma, a))
    assert cs <= allowed_failures(repetitions)
    assert std <= allowed_failures(repetitions)


def test_failure_rate_at_most_alpha_through_the_sampler():
    """The same check end to end: noise, base classifier, counting and bounds."""
    classifier = IntervalClassifier([0.0], direction=[3.0, -1.0, 2.0])
    sigma, s0, repetitions = 0.5, 0.3, 3_000
    smooth = SmoothedClassifier(classifier, sigma, 2, batch_size=50_000)
    X = np.repeat(classifier.point(s0)[None], repetitions, axis=0)
    costs = make_cost_matrix(2, {1: [0]})
    result = certify_dataset(
        smooth, X, np.ones(repetitions, int), n0=20, n=1_000, alpha=ALPHA,
        cost_matrix=costs, random_state=3,
    )  # fmt: skip
    # A half-space: the true radius is the distance to the boundary (0 for the other class).
    cs, std = failures(result, s0, lambda a: s0 if a == 1 else 0.0)
    assert cs <= allowed_failures(repetitions)
    assert std <= allowed_failures(repetitions)
    assert std >= stats.binom.ppf(FALSE_ALARM, repetitions, ALPHA / 4)

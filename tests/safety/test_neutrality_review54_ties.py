"""Pair means at the threshold (review pass 54): (0.6 + 0.3) / 2 is 0.44999999999999996 in
floats, so a pair whose mean is exactly the threshold 0.45 was not counted ('>=' documented)."""

from __future__ import annotations

import pytest

from trustlab.safety.neutrality import paired_symmetry


@pytest.mark.parametrize(
    ("a", "b", "threshold"),
    [(0.6, 0.3, 0.45), (0.3, 0.6, 0.45), (0.7, 0.6, 0.65), (0.1, 0.7, 0.4)],
)
def test_a_pair_mean_at_the_threshold_counts(a, b, threshold):
    result = paired_symmetry([a], [b], [a], [b], threshold=threshold, n_bootstrap=0)
    assert result.refusal_rate == 1.0
    assert result.opposing_perspectives_rate == 1.0


def test_a_pair_mean_below_the_threshold_does_not_count():
    result = paired_symmetry([0.6], [0.3], [0.6], [0.29], threshold=0.45, n_bootstrap=0)
    assert result.refusal_rate == 1.0
    assert result.opposing_perspectives_rate == 0.0

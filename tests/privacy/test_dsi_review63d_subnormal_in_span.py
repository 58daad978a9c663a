"""DSICovariance.mahalanobis of a tiny row in the span (diff review 63 D of 8a9caaca).

8a9caaca dropped the 1e-300 floor, so subnormal rows leaving the span are infinite, but a subnormal
row in the span was infinite too: its projection rounded in its last bits ([1, 1] * 1e-323 for the
span of [1, 1]: inf, measured), and a row below ~1e-160 had distance 0 (its squares underflowed).
The rows are now divided by a power of 2 near their largest entry first (exact: ordinary rows
give the same bits, 2,200 random rows at 1e-100..1e100 checked)."""

from __future__ import annotations

import numpy as np

from trustlab.privacy import optimal_gaussian_covariance


def test_a_tiny_row_in_the_span_has_its_scaled_distance():
    covariance = optimal_gaussian_covariance([[1.0, 1.0], [2.0, 2.0]])  # noise along [1, 1]
    unit = covariance.mahalanobis([[1.0, 1.0]])[0]
    tiny = np.array([1e-200, 1e-310, 5e-324 * 2])  # 1e-323 as 2 units of the last place
    distance = covariance.mahalanobis(tiny[:, None] * [1.0, 1.0])
    # a power of 2 times the unit row's distance, rounded once more (a subnormal result keeps
    # fewer digits: ~1e-13 at 1e-310, so 1e-6 is loose); 2 units of the last place: 1 or 2 units
    np.testing.assert_allclose(distance[:2], unit * tiny[:2], rtol=1e-6)
    assert 0 < distance[2] <= 2 * unit * tiny[2]
    assert np.isinf(covariance.mahalanobis([[0.0, 1e-309], [5e-324, 0.0]])).all()

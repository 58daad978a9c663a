"""DSICovariance.mahalanobis: a subnormal row outside the span is infinite (diff review 63 A).

e0c7b4de took the rows' norms without underflow, but the comparison still floored a row's norm at
1e-300, so a row of norm below ~1e-292 leaving the span ([0, 1e-309] for noise along the first axis
only) was compared with 1e-308 and reported at distance 0, as if it got noise.
"""

from __future__ import annotations

import numpy as np

from trustlab.privacy import optimal_gaussian_covariance


def test_a_subnormal_row_leaving_the_span_is_infinite():
    covariance = optimal_gaussian_covariance([[1.0, 0.0], [2.0, 0.0]])  # noise along x only
    assert covariance.rank == 1
    rows = [[0.0, 1e-309], [0.0, 5e-324], [0.0, 1e-300], [0.0, 0.0], [1.0, 0.0]]
    distance = covariance.mahalanobis(rows)
    assert np.isinf(distance[:3]).all()
    assert distance[3] == 0.0  # a zero difference needs no noise
    assert np.isfinite(distance[4])

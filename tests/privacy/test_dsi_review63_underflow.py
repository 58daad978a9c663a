"""Review 63 of DSI: differences so small that their squared norm underflows.

``np.linalg.norm`` squares the entries, so a row below ~1e-162 had norm 0: the solver's check
that every difference lies in the noise's span divided 0 by 0 and let it through (rank 1, the
second difference with no noise at all, yet worst_epsilon reported the target), and
``mahalanobis`` called such a row outside the span 0 instead of inf.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism, dsi_noise, optimal_gaussian_covariance


@pytest.mark.parametrize("tiny", [1e-170, 1e-200, 1e-300])
def test_a_difference_whose_square_underflows_is_refused_not_left_without_noise(tiny):
    with pytest.raises(InputError, match="^deltas: expected differences within 1e"):
        optimal_gaussian_covariance([[1.0, 0.0], [0.0, tiny]])
    with pytest.raises(InputError, match="^deltas: expected differences within 1e"):
        dsi_noise([[1.0, 0.0, 0.0], [0.0, tiny, tiny]], epsilon=1.0, delta=1e-5)


def test_the_black_box_mechanism_refuses_it_too():
    records = np.array([[1.0, 0.0], [0.0, 1e-200]])  # leaving out each gives those differences
    mechanism = DSIMechanism(_column_sums, epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match="expected differences within 1e"):
        mechanism.fit(records, [0, 1])


def _column_sums(X):
    return X.sum(axis=0)


def test_mahalanobis_of_a_tiny_row_outside_the_span_is_infinite():
    covariance = optimal_gaussian_covariance([[1.0, 0.0]])  # noise along the first axis only
    distances = covariance.mahalanobis([[0.0, 1e-200], [1e-200, 1e-200], [2.0, 0.0]])
    assert distances[0] == np.inf and distances[1] == np.inf
    assert distances[2] == pytest.approx(2.0, rel=1e-12)

"""Review 65: behaviours no privacy test pinned (each mutation of them passed every test)."""

import numpy as np

from trustlab.privacy import DSIMechanism, optimal_gaussian_covariance


def test_a_row_leaving_the_span_by_more_than_1e_8_of_its_norm_is_infinitely_far():
    covariance = optimal_gaussian_covariance([[1.0, 0.0], [2.0, 0.0]])  # noise along [1, 0] only
    distance = covariance.mahalanobis([[1.0, 1e-6], [1.0, 1e-10]])
    assert np.isinf(distance[0])  # no noise covers its 1e-6: the release tells it apart
    np.testing.assert_allclose(distance[1], 0.5, rtol=1e-12)  # rounding-level part: dropped


def test_a_group_repeating_another_groups_difference_is_left_out_of_the_solve():
    records = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # groups 0 and 1 move the sum alike
    mech = DSIMechanism(lambda rows: rows.sum(axis=0), epsilon=1.0, delta=1e-5)
    mech.fit(records, [0, 1, 2])
    assert mech.constrained_.tolist() == [True, False, True]
    assert mech.covariance_.n_differences == 2

"""cluster_bootstrap_ci refuses a group held by a single cluster (review 59).

Every resample that draws that cluster gives the group the same mean, so the group's variation
never reaches the interval: two clusters, one per group, gave 1.0000 [1.0000, 1.0000] with
SE 0 from four votes, and one treated cluster among 50 an interval as narrow as if that
group's mean were known exactly.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import cluster_bootstrap_ci


def test_two_clusters_one_per_group_are_refused():
    y = np.array([1.0, 1.0, 0.0, 0.0])
    clusters = np.array([0, 0, 1, 1])
    groups = np.array([True, True, False, False])
    with pytest.raises(InputError, match=r"^groups: .*at least 2 clusters.*first \(True\)"):
        cluster_bootstrap_ci(y, clusters, groups, n_bootstrap=100, random_state=0)


def test_a_second_group_in_one_cluster_is_refused():
    clusters = np.repeat(np.arange(50), 4)
    y = np.random.default_rng(0).normal(size=200)
    with pytest.raises(InputError, match=r"second \(False\) group in 1 cluster"):
        cluster_bootstrap_ci(y, clusters, clusters != 7, n_bootstrap=100, random_state=0)


def test_groups_in_two_clusters_each_still_give_an_interval():
    clusters = np.repeat(np.arange(4), 3)
    y = np.arange(12, dtype=float)
    result = cluster_bootstrap_ci(y, clusters, clusters < 2, n_bootstrap=200, random_state=0)
    assert result.estimate == pytest.approx(np.mean(y[:6]) - np.mean(y[6:]), abs=1e-12)
    assert result.low <= result.estimate <= result.high

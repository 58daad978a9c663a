"""The aggregate regime's first start (without a warm start) is the independence start: random
baselines can sit on a flat region of the reduced problem and stop there."""

import numpy as np
import pytest

from trustlab.fairness import dcp_from_aggregates
from trustlab.fairness._aggregate import AggregateProblem, independent_start, violation
from trustlab.fairness._group import FEASIBILITY_TOL


@pytest.mark.parametrize("restarts", [1, 2])
def test_two_groups_each_predicting_the_other_label_reach_the_least_dcp_0(restarts):
    # group 0 holds only label 0 and predicts 1, group 1 only label 1 and predicts 0: the
    # baseline [[0, 1], [1, 0]] treats everyone alike, DCP 0; both random restarts stopped at
    # 0.49999, "converged"
    res = dcp_from_aggregates(
        [0.5, 0.5], [[1, 0], [0, 1]], [[0, 1], [1, 0]], n_restarts=restarts, random_state=0
    )
    assert res.estimate < 1e-4
    assert res.restart_values[0] == res.estimate and all(res.converged)


def test_one_restart_does_not_depend_on_the_seed():
    w, pi, p = [0.3, 0.7], [[0.6, 0.4], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]
    values = {
        dcp_from_aggregates(w, pi, p, n_restarts=1, random_state=s).estimate for s in range(3)
    }
    assert len(values) == 1


def test_the_independence_start_is_feasible_with_a_label_missing_everywhere():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n_groups, k = rng.integers(2, 6), rng.integers(2, 5)
        pi = rng.dirichlet(np.ones(k), size=n_groups)
        pi[:, 0] = 0  # label 0 has no mass: its baseline row is the mean of the p rows
        pi /= pi.sum(axis=1, keepdims=True)
        problem = AggregateProblem.build(
            rng.dirichlet(np.ones(n_groups)), pi, rng.dirichlet(np.ones(k), size=n_groups), 1.0
        )
        baseline, confusions = independent_start(problem)
        assert np.allclose(baseline.sum(axis=1), 1.0)
        assert violation(problem, baseline, confusions) <= FEASIBILITY_TOL

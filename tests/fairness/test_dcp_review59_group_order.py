"""No known-regime bound depends on the order of the groups (review 59). The groups' rows reached
the mean row's sum and the LPs of the local search in the order given, and a local search could
end at another local minimum: on this problem mean+LM read 0.4200 with the groups in one order and
0.4555 in reverse. Each label's groups are now put in one canonical order first."""

import numpy as np
import pytest

from trustlab.fairness import dcp_from_confusion

METHODS = ("mean", "greedy", "mean_lm", "greedy_lm")


def _problem(seed: int, n_groups: int = 6, n_labels: int = 4):
    """Confusion matrices from small counts (zeros and repeated rows), random shares."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, size=(n_groups, n_labels, n_labels)).astype(float)
    counts[counts.sum(axis=-1) == 0] = 1.0
    alpha = counts / counts.sum(axis=-1, keepdims=True)
    weights = rng.dirichlet(np.ones(n_groups))
    dist = rng.dirichlet(np.ones(n_labels), size=n_groups)
    return alpha, weights, dist


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_every_bound_is_the_same_in_any_group_order(order):
    alpha, weights, dist = _problem(27)
    n_groups = len(weights)
    perm = (
        np.arange(n_groups)[::-1]
        if order == "reversed"
        else np.random.default_rng(1).permutation(n_groups)
    )
    base = dcp_from_confusion(alpha, weights, dist, random_state=0)
    moved = dcp_from_confusion(alpha[perm], weights[perm], dist[perm], random_state=0)
    # the same problems in the same order: the same arithmetic, up to the summation of w
    for method in METHODS:
        assert moved.bounds[method] == pytest.approx(base.bounds[method], abs=1e-12), method
    assert (moved.lower, moved.upper) == pytest.approx((base.lower, base.upper), abs=1e-12)
    assert np.allclose(moved.baseline, base.baseline, atol=1e-12)
    assert np.allclose(moved.unfair_fraction, base.unfair_fraction[perm], atol=1e-12)

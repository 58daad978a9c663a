"""SafetyPolytope.project: a far facet does not excuse a flagged row (review 57, second reviewer
diffC). The rounding slack of ``feasible`` (33d6438) was 1e-9 x (1 + margin + max_k |c_k|):
one facet far from the data (c ~ -1e6) made it 1e-3 for every facet, so at the default margin
a corrected row with c = +1.4e-7 (is_unsafe True) was reported feasible. The slack is now each
facet's own, 1e-9 x (1 + margin + |c_k|)."""

import numpy as np
import pytest

from trustlab.safety import SafetyPolytope


def _far_facet_polytope(seed):
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(2, 7)), int(rng.integers(2, 8))
    normals, offsets = rng.normal(size=(k, d)), rng.uniform(0.1, 2, size=k)
    far = rng.integers(0, k)
    normals[far] *= 1e-3
    offsets[far] = 1e6  # every point is ~1e6 inside this facet
    polytope = SafetyPolytope.from_parameters(
        normals, offsets, mean=rng.normal(size=d) * 10, scale=10 ** rng.uniform(-3, 2, size=d)
    )
    return polytope, polytope.mean_ + rng.normal(size=(6, d)) * polytope.scale_ * 4


@pytest.mark.parametrize("margin", [1e-6, 0.0])
def test_a_feasible_row_is_not_flagged_beside_a_far_facet(margin):
    polytope, X = _far_facet_polytope(50275)
    result = polytope.project(X, margin=margin)
    values = polytope.decision_function(result.points)
    # old (margin 1e-6): row 5 feasible with c = +1.4e-7, flagged by is_unsafe
    limit = 1e-9 * (1 + np.abs(values)) if margin == 0 else 0.0  # margin 0: rounding either side
    assert not (result.feasible & (values > limit)).any()

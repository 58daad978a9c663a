"""Review 64: the exact L2 projection of a far point onto a polytope with two parallel facets
(the same normal, two offsets). Clarabel stalled on the dual (InsufficientProgress) and the
row came back unmoved, ``feasible=False``, though the polytope is not empty; the primal solve
is now tried as well."""

import numpy as np

from trustlab.safety import SafetyPolytope

NORMALS = [
    [0.5228708948391112, 0.35786967764803124, -0.6631035145259176, -0.6165061466820784],
    [0.5228708948391112, 0.35786967764803124, -0.6631035145259176, -0.6165061466820784],
    [-2.700103979886236, 0.33714819206874613, 0.3295586563507561, 1.3934318714435818],
]
OFFSETS = [0.8211631188958838, 0.3217388001680418, 0.11636245608868218]
FAR = [[-4280.221284628195, 2649.527668897711, -1810.758046118678, 1507.4533637501054]]


def test_parallel_facets_do_not_leave_a_far_row_unprojected():
    full = SafetyPolytope.from_parameters(NORMALS, OFFSETS)
    # the same set without the looser of the two parallel facets: a well-posed projection
    reduced = SafetyPolytope.from_parameters(NORMALS[1:], OFFSETS[1:])
    ours, oracle = full.project(FAR), reduced.project(FAR)
    assert oracle.feasible.all() and ours.feasible.all()  # ours was False, distance 0
    assert not full.is_unsafe(ours.points).any()
    # the nearest point is unique; both solvers' tolerances are ~1e-9 of the scale (1e4)
    np.testing.assert_allclose(ours.distance, oracle.distance, rtol=1e-6)
    np.testing.assert_allclose(ours.points, oracle.points, rtol=0, atol=1e-3)

"""Review 64 (diff review L of 22f2197a): a far row (~2e4) and six facets in five dimensions
(a singular Gram matrix) stalled both Clarabel solves, the dual and the primal fallback, and
the row came back unmoved with ``feasible=False`` though the origin is inside. The primal
solve is now retried in units of the row's largest facet distance (the same problem scaled)."""

import numpy as np

from trustlab.safety import SafetyPolytope

NORMALS = [
    [0.0908395763866075, -1.2055991913108135, 1.1176678651447152, -0.2524987544235025, -1.7187525937601318],
    [-0.14413671467097858, -1.727029860446229, -1.0046959546512573, 0.0210839842272019, -0.9169257795689443],
    [1.0753227232917877, -1.4641393051201623, 0.26913287834979754, 0.5642681004713006, 1.467471704389781],
    [0.9299717703254154, 0.24120445283023215, 0.08867354909967969, -0.05003194727880665, 1.1474753245159799],
    [-0.6477984780045039, 0.5302385977171965, -0.08412698087139053, 0.2503985407752395, -0.25238638051859014],
    [2.1453747242798897, -0.6467331644864861, 0.26380847414351544, 0.28688782084437325, 0.6192367647758478],
]  # fmt: skip
OFFSETS = [0.07274275070155331, 0.5685072428482641, 0.21148099958230393, 0.761316192096843,
           0.17158623642737997, 0.24666262820677926]  # fmt: skip
FAR = [[-4107.004356017024, -2649.597977310922, 12480.37662181626, 21525.477747522058,
        -13163.338419679363]]  # fmt: skip


def test_a_far_row_is_projected_when_both_solves_stall():
    polytope = SafetyPolytope.from_parameters(NORMALS, OFFSETS)
    result = polytope.project(FAR)
    assert result.feasible.all()  # was False, the row unmoved (distance 0)
    assert not polytope.is_unsafe(result.points).any()
    # scipy SLSQP started from our point: 28569.8178871 (1e-10 relative); a 1e-6 tolerance
    # leaves room for the solvers' 1e-9-of-scale tolerances on other CPUs
    np.testing.assert_allclose(result.distance, [28569.81788972221], rtol=1e-6)

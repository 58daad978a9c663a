"""Third review of the exact L2 projection: facets that are positive multiples of one another
(the margin is per facet, so the scaled copy is a parallel constraint at another distance) made
the active-set system inconsistent; its least-squares multipliers were accepted and the row was
reported infeasible, short of the margin, although a feasible nearest point exists."""

import numpy as np
from scipy.optimize import minimize

from trustlab.safety import SafetyPolytope


def test_a_facet_and_its_scaled_copy_project_feasibly():
    box = SafetyPolytope.from_parameters([[1.0, 0.0], [1.0, 0.0], [2.0, 0.0]], [1.0, 1.0, 2.0])
    result = box.project([[3.0, 1.0]])
    assert result.feasible.tolist() == [True]
    assert result.max_violation[0] <= -1e-6 + 1e-12
    assert np.allclose(result.points, [[1.0 - 1e-6, 1.0]], atol=1e-12)


def test_parallel_facets_match_a_brute_force_projection():
    rng = np.random.default_rng(7)
    for _ in range(40):
        d, k = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        normals = rng.normal(size=(k, d))
        copies = normals[rng.integers(0, k, size=2)] * rng.uniform(0.2, 5.0, size=(2, 1))
        normals = np.vstack([normals, copies])
        offsets = rng.uniform(0.5, 2.0, size=len(normals))
        sap = SafetyPolytope.from_parameters(normals, offsets)
        margin = float(rng.choice([1e-6, 0.3]))
        x = rng.normal(size=d) * 4.0
        result = sap.project(x[None, :], margin=margin)
        if not result.moved[0]:
            continue
        reference = _brute_force(x, normals, offsets - margin)
        assert result.feasible[0]
        assert result.max_violation[0] <= -margin + 1e-9
        assert np.isclose(result.distance[0], np.linalg.norm(reference - x), rtol=1e-6)


def _brute_force(x, normals, bounds):
    """The nearest point of ``{y : normals @ y <= bounds}`` by SLSQP."""
    constraint = {"type": "ineq", "fun": lambda y: bounds - normals @ y, "jac": lambda y: -normals}
    return minimize(
        lambda y: 0.5 * np.sum((y - x) ** 2),
        x,
        jac=lambda y: y - x,
        constraints=[constraint],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    ).x

"""Review 57: the exact L2 projection certifies only rows that end inside, whatever the scale
of the facets (long normals come from standardising activations of small spread)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from trustlab.safety import SafetyPolytope


@pytest.mark.parametrize("spread", [1.0, 1e-4])
def test_long_normals_projection_is_inside_and_nearest(spread):
    rng = np.random.default_rng(7)
    normals = rng.normal(size=(3, 2))
    offsets = np.array([1.0, 0.5, 0.8])
    polytope = SafetyPolytope.from_parameters(normals, offsets, scale=np.full(2, spread))
    X = rng.normal(size=(5, 2)) * 4 * spread
    result = polytope.project(X)
    # old: the tolerance mixed facet units with their squares (Gram entries ~1e8 here) and
    # certified a row still outside by ~8e6 facet units as feasible
    assert result.all_feasible
    assert not polytope.is_unsafe(result.points).any()
    coef, limit = polytope.coef_, -polytope.intercept_ - 1e-6
    for i in np.flatnonzero(result.moved):
        x = X[i]
        oracle = minimize(
            lambda y, x=x: ((y - x) ** 2).sum() / spread**2,
            result.points[i],
            constraints=[{"type": "ineq", "fun": lambda y: (limit - coef @ y) * spread}],
            method="SLSQP",
            options={"ftol": 1e-15},
        )
        assert result.distance[i] == pytest.approx(np.sqrt(oracle.fun) * spread, rel=1e-6)

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


def test_concept_projection_that_fails_returns_its_least_violated_point():
    # concepts u1 = relu(z1), u2 = relu(-z1), u3 = relu(z2); facet 1 is u1 + u2 + 0.5: as
    # u1, u2 >= 0 it is >= 0.5 > 0 >= -margin for every input (no encoder output meets its
    # offset -0.5), so no row can get inside, whatever the solver's float path
    polytope = SafetyPolytope.from_parameters(
        [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        [-0.5, 1.0],
        encoder_weight=[[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]],
        encoder_bias=[0.0, 0.0, 0.0],
    )
    X = np.array([[2.0, 0.0], [-1.0, 3.0], [0.3, -2.0], [1e-3, 5.0]])
    before = polytope.decision_function(X)
    result = polytope.project(X)
    assert not result.feasible.any()
    # old: the last step came back, worse than x (rows 1 and 2: 2.0 -> 2.000003, 0.8 -> 1.0);
    # the deepening can also run away (rng 55 below), and Safe Flow writes that point
    assert (result.max_violation <= before).all()
    assert result.distance.max() < 10.0
    assert np.array_equal(result.max_violation, polytope.decision_function(result.points))


def test_concept_projection_of_a_random_polytope_never_ends_worse_than_it_started():
    rng = np.random.default_rng(55)
    m, k = int(rng.integers(2, 6)), int(rng.integers(1, 4))
    weight, bias = rng.normal(size=(m, 2)), rng.normal(size=m) * 0.5
    normals, offsets = rng.normal(size=(k, m)), rng.uniform(0.2, 1.5, size=k)
    polytope = SafetyPolytope.from_parameters(
        normals, offsets, encoder_weight=weight, encoder_bias=bias
    )
    X = rng.uniform(-3, 3, size=(5, 2))
    before = polytope.decision_function(X)
    result = polytope.project(X)
    # old: row 2's deepening ran away (violation 0.17 -> 1.5e6, moved a million units)
    assert (result.max_violation <= before).all()
    assert (result.distance[~result.feasible] < 10.0).all()
    assert np.array_equal(result.max_violation, polytope.decision_function(result.points))


def _spread_polytope(seed, high, mean_scale, n_rows):
    """A random raw-space polytope over coordinates of spread 1e-4..1e2 (nearly parallel, long
    facet normals) and rows around its mean, drawn from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(2, high)), int(rng.integers(1, high))
    scale = 10 ** rng.uniform(-4, 2, size=d)
    polytope = SafetyPolytope.from_parameters(
        rng.normal(size=(k, d)),
        rng.uniform(0.1, 2, size=k),
        mean=rng.normal(size=d) * mean_scale,
        scale=scale,
    )
    return polytope, polytope.mean_ + rng.normal(size=(n_rows, d)) * scale * 4


def test_nearly_parallel_facets_in_raw_space_end_inside():
    # standardised coordinates of very different spread (4e-4 to 36) make the raw-space facets
    # nearly parallel (Gram condition number 2.5e10): the dual active-set solve failed there
    polytope, X = _spread_polytope(908, high=6, mean_scale=30, n_rows=8)
    for margin in (1e-6, 0.5):
        result = polytope.project(X, margin=margin)
        # old: rows left outside (c up to +19; one of them reported feasible)
        assert not polytope.is_unsafe(result.points).any()
        assert (result.max_violation[result.feasible] <= -margin / 2).all()


def _nearest_by_enumeration(A, b, x):
    """Distance from x to {A y <= b} by trying every active set (rows normalised)."""
    lengths = np.linalg.norm(A, axis=1)
    A, b = A / lengths[:, None], b / lengths
    best = np.inf
    for mask in range(1, 2 ** len(A)):
        rows = [k for k in range(len(A)) if mask >> k & 1]
        sub = A[rows]
        lam = np.linalg.lstsq(sub @ sub.T, sub @ x - b[rows], rcond=None)[0]
        y = x - sub.T @ lam
        if lam.min() >= -1e-12 and (A @ y - b).max() <= 1e-9 * (1 + np.abs(b).max()):
            best = min(best, float(np.linalg.norm(y - x)))
    return best


@pytest.mark.parametrize("seed", [1017, 1067, 1069, 1221])
def test_feasible_means_inside_at_the_margin_in_the_facets_own_units(seed):
    # raw-space facets of coordinates of spread 1e-4..1e2 (nearly parallel, long normals):
    # the KKT certificate can fail on a point that is inside and nearest
    polytope, X = _spread_polytope(seed, high=7, mean_scale=10, n_rows=6)
    for margin in (1e-6, 0.0):
        result = polytope.project(X, margin=margin)
        values = polytope.violations(result.points)
        for i in np.flatnonzero(result.moved):
            worst = values[i].max()
            slack = 1e-9 * (1 + np.abs(values[i]).max())
            if result.feasible[i]:
                # old (margin 0, seed 1069): feasible rows with c up to +7e-7 (flagged)
                assert worst <= (0.0 if margin else slack)
            nearest = _nearest_by_enumeration(polytope.coef_, -polytope.intercept_ - margin, X[i])
            if worst <= 0.0 and result.distance[i] == pytest.approx(nearest, rel=1e-9):
                # old (margin 1e-6, seeds 1017 row 4, 1067 row 4): c = -4.3e-7 and -1.3e-8,
                # nearest, reported infeasible (failed certificate, Clarabel's point outside)
                assert result.feasible[i]


@pytest.mark.parametrize(("seed", "margin"), [(1084, 0.5), (2170, 1e-6)])
def test_a_feasible_point_of_the_primal_fallback_is_the_nearest(seed, margin):
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(2, 7)), int(rng.integers(1, 7))
    scale = 10 ** rng.uniform(-4, 2, size=d) if seed % 2 else np.full(d, 10 ** rng.uniform(-4, 1))
    polytope = SafetyPolytope.from_parameters(
        rng.normal(size=(k, d)),
        rng.uniform(0.1, 2, size=k),
        mean=rng.normal(size=d) * 10,
        scale=scale,
    )
    X = polytope.mean_ + rng.normal(size=(6, d)) * scale * 4
    result = polytope.project(X, margin=margin)
    for i in np.flatnonzero(result.moved & result.feasible):
        nearest = _nearest_by_enumeration(polytope.coef_, -polytope.intercept_ - margin, X[i])
        # old: Clarabel's default tolerances (1e-8) left points up to 1% farther (2170 row 3)
        assert result.distance[i] == pytest.approx(nearest, rel=1e-6)

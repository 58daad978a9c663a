"""SafetyPolytope.project: exact against cvxpy, inside points untouched, idempotent, concept
encoder reaches feasibility (spec check S2)."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polytope_synthetic import synthetic_polytope

from trustlab.safety import SafetyPolytope


@pytest.fixture(scope="module")
def fitted():
    X, y, _, _ = synthetic_polytope(n_safe=600, n_unsafe=600, seed=5)
    return SafetyPolytope(n_facets=6, random_state=0).fit(X, y), X, y


def _random_polytope(seed, d=8, k=5):
    """Facets with raw mean/scale so that the standardisation is exercised too."""
    rng = np.random.default_rng(seed)
    return SafetyPolytope.from_parameters(
        rng.normal(size=(k, d)),
        rng.uniform(0.5, 2.0, size=k),
        mean=rng.normal(size=d),
        scale=rng.uniform(0.5, 2.0, size=d),
    )


def _cvxpy_projection(polytope, x, margin, norm):
    A, e = polytope.coef_, -polytope.intercept_
    y = cp.Variable(x.size)
    distance = cp.sum_squares(y - x) if norm == "l2" else cp.norm1(y - x)
    problem = cp.Problem(cp.Minimize(distance), [A @ y <= e - margin])
    solver = cp.CLARABEL if norm == "l2" else cp.HIGHS
    problem.solve(solver=solver)
    return y.value, problem.value


def test_l2_projection_equals_cvxpy_and_lands_inside(fitted):
    polytope, X, y = fitted
    unsafe = X[y][:25]
    result = polytope.project(unsafe, margin=0.1)
    assert result.moved.all() and result.all_feasible
    for i, x in enumerate(unsafe):
        expected, _ = _cvxpy_projection(polytope, x, 0.1, "l2")
        assert np.max(np.abs(result.points[i] - expected)) <= 1e-6
    assert (polytope.violations(result.points) <= -0.1 + 1e-9).all()
    assert not polytope.is_unsafe(result.points).any()
    assert result.kkt_residual.max() <= 1e-9
    summary = result.to_dict()
    assert set(summary) == {
        "method",
        "norm",
        "margin",
        "n",
        "n_moved",
        "n_feasible",
        "all_feasible",
        "distance",
        "moved",
        "feasible",
        "max_violation",
    }
    assert summary["n_moved"] == 25 and summary["all_feasible"] is True
    assert summary["distance"] == pytest.approx(result.distance.tolist())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_l2_projection_equals_cvxpy_on_random_polytopes(seed):
    polytope = _random_polytope(seed)
    points = np.random.default_rng(seed + 10).normal(scale=4.0, size=(20, 8))
    result = polytope.project(points, margin=0.0)
    for i in np.flatnonzero(result.moved):
        expected, _ = _cvxpy_projection(polytope, points[i], 0.0, "l2")
        assert np.max(np.abs(result.points[i] - expected)) <= 1e-6
    assert result.all_feasible
    assert polytope.violations(result.points).max() <= 1e-9


def test_l1_projection_has_the_cvxpy_objective(fitted):
    polytope, X, y = fitted
    for x in X[y][:10]:
        result = polytope.project(x, margin=0.1, norm="l1")
        _, best = _cvxpy_projection(polytope, x, 0.1, "l1")
        assert result.distance[0] == pytest.approx(best, rel=1e-6)
        assert polytope.violations(result.points).max() <= -0.1 + 1e-7


def test_unmoved_rows_are_bit_identical_and_moved_ones_are_not(fitted):
    polytope, X, y = fitted
    result = polytope.project(X)
    assert np.array_equal(result.points[~result.moved], X[~result.moved])
    score = polytope.decision_function(X)
    assert (score[result.moved] > -1e-6).all() and (score[~result.moved] <= 0).all()
    assert result.moved.any() and not result.moved.all()
    assert (result.distance[result.moved] > 0).all()


@st.composite
def _inside_points(draw):
    """A random polytope and a point whose deepest-cut facet lies exactly ``depth`` away
    (``max_k c_k(x) = -depth``): every example is an inside point near a facet."""
    polytope = _random_polytope(draw(st.integers(0, 10_000)))
    depth = draw(st.floats(1e-3, 5.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    normals, offsets = polytope.normals_, polytope.offsets_  # c(z) = normals @ z - offsets
    # 5 facets in 8 dimensions: w with normals @ w = -1 exists, and s * w is deep inside
    w = np.linalg.lstsq(normals, -np.ones(len(offsets)), rcond=None)[0]
    deep = (depth + 1.0) * w  # c(deep) = -(depth + 1) - offsets < -depth
    u = rng.normal(size=normals.shape[1])
    slope = normals @ u
    if (slope <= 0).all():
        u, slope = -u, -slope
    # walk from ``deep`` along u until the first facet reaches -depth
    rise = -depth - (normals @ deep - offsets)
    step = np.min(rise[slope > 0] / slope[slope > 0])
    z = deep + step * u
    return polytope, polytope.mean_ + polytope.scale_ * z, depth


@settings(max_examples=25, deadline=None)
@given(case=_inside_points())
def test_projection_of_an_inside_point_is_itself(case):
    polytope, x, depth = case
    assert polytope.violations(x).max() == pytest.approx(-depth, abs=1e-9)  # the generator
    result = polytope.project(x)
    assert not result.moved[0]
    assert np.array_equal(result.points[0], x)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), spread=st.floats(0.5, 20.0))
def test_projection_is_idempotent(seed, spread):
    polytope = _random_polytope(seed % 7)
    x = np.random.default_rng(seed).normal(scale=spread, size=(3, 8))
    once = polytope.project(x, margin=0.01)
    twice = polytope.project(once.points, margin=0.01)
    assert once.all_feasible
    assert not twice.moved.any()
    assert np.array_equal(twice.points, once.points)


def test_concept_projection_with_an_identity_encoder_equals_the_linear_one():
    # relu(I z + 100) = z + 100 near the data: the same polytope, shifted offsets
    linear = _random_polytope(3)
    normals, offsets = linear.normals_, linear.offsets_
    concept = SafetyPolytope.from_parameters(
        normals,
        offsets + 100.0 * normals.sum(axis=1),
        encoder_weight=np.eye(8),
        encoder_bias=np.full(8, 100.0),
        mean=linear.mean_,
        scale=linear.scale_,
    )
    points = np.random.default_rng(0).normal(scale=4.0, size=(10, 8))
    assert np.allclose(concept.violations(points), linear.violations(points), atol=1e-9)
    exact = linear.project(points, margin=0.05)
    iterated = concept.project(points, margin=0.05)
    assert iterated.all_feasible
    assert np.allclose(iterated.points, exact.points, atol=1e-8)
    assert iterated.method == "sequential-linearisation"


def test_concept_projection_reaches_feasibility_on_a_fitted_encoder():
    X, y, _, _ = synthetic_polytope(n_safe=600, n_unsafe=600, seed=2)
    polytope = SafetyPolytope(n_facets=4, encoder="concept", n_concepts=32, random_state=0)
    polytope.fit(X, y)
    flagged = X[polytope.is_unsafe(X)][:30]
    result = polytope.project(flagged, margin=0.05)
    print(f"concept projection: {int(result.feasible.sum())}/{len(flagged)} feasible")
    assert result.feasible.mean() >= 0.9
    ok = result.feasible
    assert (polytope.violations(result.points[ok]) <= -0.05 + 1e-6).all()
    assert np.array_equal(result.feasible, result.max_violation <= -0.05 + 1e-6)


def test_an_empty_polytope_is_reported_infeasible():
    # x0 <= -1 and -x0 <= -1 (x0 >= 1): no point satisfies both
    empty = SafetyPolytope.from_parameters([[1.0, 0.0], [-1.0, 0.0]], [-1.0, -1.0])
    result = empty.project([[0.0, 0.0]])
    assert result.moved[0] and not result.feasible[0]
    assert np.array_equal(result.points[0], [0.0, 0.0])

"""Tests of multiclass DCP (known regime, inputs from records, public API and results).

Oracles: a dense grid refined by bounded scalar minimisation (K = 2), a simplex grid refined by
Nelder-Mead (K = 3 and 4) and random points of the simplex (against the exact vertex search),
direct evaluation of F_y with the closed form 1 - min_z b_z / a_z, SciPy's linprog on the same LP
as the warm-started highspy solver, the authors' method (no extra search) as a floor for the
upper bounds, SVD null spaces, fairlearn's MetricFrame and equalized_odds_difference, and
invariances (groups, labels, zero-mass cells). A fresh interpreter checks that nothing is printed.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.optimize import linprog, minimize, minimize_scalar  # noqa: E402

from trustlab.errors import BackendError, InputError  # noqa: E402
from trustlab.fairness import (  # noqa: E402
    AggregateDCPResult,
    DCPResult,
    dcp_from_aggregates,
    dcp_from_confusion,
    dcp_inputs,
    multiclass_dcp,
)
from trustlab.fairness import _greedy as greedy  # noqa: E402
from trustlab.fairness import _known as known  # noqa: E402
from trustlab.fairness import _local as local  # noqa: E402
from trustlab.fairness import _vertex as vertex  # noqa: E402
from trustlab.fairness._eta import eta, eta_grad_a  # noqa: E402
from trustlab.fairness._label import TIE_TOL, LabelProblem, clip_confusions  # noqa: E402

# --------------------------------------------------------------------------- helpers


def random_problem(seed: int, n_groups: int, n_labels: int, low: float = 0.01):
    """Uniform random rows as in the authors' generate_tests, kept away from 0 (no clipping)."""
    rng = np.random.default_rng(seed)
    alpha = rng.random((n_groups, n_labels, n_labels)) + low
    alpha /= alpha.sum(axis=2, keepdims=True)
    weights = rng.random(n_groups) + 0.05
    weights /= weights.sum()
    dist = rng.random((n_groups, n_labels)) + 0.05
    dist /= dist.sum(axis=1, keepdims=True)
    return alpha, weights, dist


def direct_objective(rows, conf, mass):
    """F_y with the closed form max_z eta(a_z, b_z) = 1 - min_z b_z / a_z (rows on the simplex)."""
    rows = np.atleast_2d(rows)
    with np.errstate(divide="ignore"):
        ratios = conf[None, :, :] / rows[:, None, :]
    return (1.0 - ratios.min(axis=2)) @ mass


def simplex_grid(step: float) -> np.ndarray:
    n = int(round(1 / step))
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = i + j <= n
    a0, a1 = i[keep] / n, j[keep] / n
    return np.column_stack([a0, a1, 1.0 - a0 - a1])


@functools.cache
def brute_case(seed: int):
    """A K = 3 problem (G = 2 or 3) with each label's brute-force minimum and minimiser."""
    alpha, weights, dist = random_problem(100 + seed, 2 + seed % 2, 3)
    minima = [brute_minimum_k3(alpha[:, y, :], weights * dist[:, y]) for y in range(3)]
    return alpha, weights, dist, minima


def brute_minimum_k3(conf, mass):
    """min over the simplex of F_y for K = 3: a 0.002 grid, then Nelder-Mead from the 8 best."""
    grid = simplex_grid(0.002)
    values = np.concatenate(
        [direct_objective(chunk, conf, mass) for chunk in np.array_split(grid, 8)]
    )

    def on_simplex(x):
        row = np.array([x[0], x[1], 1.0 - x[0] - x[1]])
        if (row < 0).any():
            return 10.0
        return float(direct_objective(row, conf, mass)[0])

    best, where = float(values.min()), grid[int(values.argmin())]
    for index in np.argsort(values)[:8]:
        res = minimize(
            on_simplex,
            grid[index, :2],
            method="Nelder-Mead",
            options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 4000},
        )
        if res.fun < best:
            best, where = float(res.fun), np.array([res.x[0], res.x[1], 1 - res.x.sum()])
    return best, where


def binary_dcp(alpha, weights, dist) -> float:
    """Exact binary DCP: per y, a dense grid over a in [0, 1], refined around the best points."""
    total = 0.0
    for y in range(2):
        b = alpha[:, y, :]  # (G, 2)
        mass = weights * dist[:, y]

        def f(a, b=b, mass=mass, y=y):
            row = np.array([a, 1.0 - a]) if y == 0 else np.array([1.0 - a, a])
            return float(mass @ eta(row[None, :], b).max(axis=1))

        grid = np.linspace(0.0, 1.0, 20001)
        rows = np.stack([grid, 1 - grid], axis=1) if y == 0 else np.stack([1 - grid, grid], axis=1)
        values = eta(rows[:, None, :], b[None, :, :]).max(axis=2) @ mass
        best = float(values.min())
        for index in np.argsort(values)[:10]:
            lo, hi = grid[max(index - 2, 0)], grid[min(index + 2, grid.size - 1)]
            res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13})
            best = min(best, float(res.fun))
        total += best
    return total


def mapped_orders(orders, sigma):
    """Greedy orders after relabelling label y as sigma[y]."""
    mapped = np.empty_like(orders)
    mapped[:, sigma] = sigma[orders]
    return mapped


def random_orders(rng, attempts, n_labels):
    others = np.array([[z for z in range(n_labels) if z != y] for y in range(n_labels)])
    return rng.permuted(np.broadcast_to(others, (attempts,) + others.shape), axis=2)


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("seed", range(6))
def test_binary_case_equals_exact_dcp(seed):
    n_groups = 2 + seed % 5
    alpha, weights, dist = random_problem(seed, n_groups, 2)
    res = dcp_from_confusion(alpha, weights, dist, random_state=seed)
    exact = binary_dcp(alpha, weights, dist)
    assert res.lower == pytest.approx(exact, abs=1e-9)
    assert res.upper == pytest.approx(res.lower, abs=1e-12)


def test_identical_confusion_matrices_give_zero():
    alpha, weights, dist = random_problem(3, 4, 4)
    same = np.broadcast_to(alpha[0], alpha.shape)
    res = dcp_from_confusion(same, weights, dist, random_state=0)
    assert res.lower == 0.0
    assert res.upper == 0.0
    assert res.ratio == 1.0
    assert np.all(res.unfair_fraction == 0.0)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_groups=st.integers(2, 6),
    n_labels=st.integers(2, 5),
    empty=st.booleans(),
)
def test_lower_bound_never_exceeds_upper_bound(seed, n_groups, n_labels, empty):
    rng = np.random.default_rng(seed)
    alpha = rng.dirichlet(np.full(n_labels, 0.7), size=(n_groups, n_labels))
    weights = rng.dirichlet(np.ones(n_groups))
    dist = rng.dirichlet(np.ones(n_labels), size=n_groups)
    if empty:  # zero-mass cells and a zero-weight group
        dist[0, -1] = 0.0
        dist[0] /= dist[0].sum()
        weights[-1] = 0.0
        weights /= weights.sum()
    res = dcp_from_confusion(alpha, weights, dist, greedy_attempts=3, random_state=seed)
    for label in res.per_label:
        assert label.lower <= label.upper + 1e-12
        assert label.upper == min(label.mean, label.greedy, label.mean_lm, label.greedy_lm)
        assert label.mean_lm <= label.mean and label.greedy_lm <= label.greedy
    assert res.lower <= res.upper + 1e-12
    assert 0.0 <= res.lower and res.upper <= 1.0
    assert res.group_weights @ res.unfair_fraction == pytest.approx(res.upper, abs=1e-12)


def test_upper_bound_is_the_dcp_of_the_reported_baseline():
    alpha, weights, dist = random_problem(11, 7, 5)
    res = dcp_from_confusion(alpha, weights, dist, random_state=1)
    assert np.allclose(res.baseline.sum(axis=1), 1.0, atol=1e-12)
    assert (res.baseline >= 0).all()
    direct = sum(
        direct_objective(res.baseline[y], alpha[:, y, :], weights * dist[:, y])[0] for y in range(5)
    )
    assert res.upper == pytest.approx(direct, abs=1e-12)
    for y, label in enumerate(res.per_label):
        assert label.mass == pytest.approx(weights @ dist[:, y], abs=1e-15)
    assert res.lower == pytest.approx(sum(b.lower for b in res.per_label), abs=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_bounds_bracket_brute_force_minimum_for_three_labels(seed):
    alpha, weights, dist, minima = brute_case(seed)
    res = dcp_from_confusion(alpha, weights, dist, random_state=seed)
    clipped = clip_confusions(alpha)
    for y, label in enumerate(res.per_label):
        brute, where = minima[y]
        assert label.lower <= brute + 1e-9
        assert label.upper >= brute - 1e-9
        # started in the global basin, the local search stays at the global minimum
        problem = LabelProblem(y, clipped[:, y, :], weights * dist[:, y])
        assert local.local_minimum(problem, where).value == pytest.approx(brute, abs=1e-6)


def test_upper_bound_is_within_1e3_of_the_global_minimum_for_three_labels():
    """Every one of these 18 K = 3 label problems (G in {2, 3}) has its upper bound within 1e-3
    of the brute-force global minimum (the vertex search makes it exact for such sizes)."""
    gaps = []
    for seed in range(6):
        alpha, weights, dist, minima = brute_case(seed)
        res = dcp_from_confusion(alpha, weights, dist, random_state=seed)
        gaps += [label.upper - minima[y][0] for y, label in enumerate(res.per_label)]
    gaps = np.array(gaps)
    assert gaps.size == 18
    assert (gaps <= 1e-3).all()
    assert (gaps >= -1e-9).all()


def test_vertex_minimum_is_never_above_the_brute_force_minimum():
    """The vertex search is exact: on the same 18 K = 3 problems it is at most the brute-force
    minimum (a grid refined by Nelder-Mead, which can only overestimate the minimum)."""
    for seed in range(6):
        alpha, weights, dist, minima = brute_case(seed)
        clipped = clip_confusions(alpha)
        for y in range(3):
            problem = LabelProblem(y, clipped[:, y, :], weights * dist[:, y])
            row, value = vertex.vertex_minimum(problem)
            assert value <= minima[y][0] + 1e-12
            assert value == pytest.approx(float(problem.value(row)), abs=1e-15)


def test_vertex_minimum_matches_dense_search_for_four_labels():
    """K = 4, G = 3: a 0.02 grid of the 3-simplex refined by Nelder-Mead never beats it."""
    alpha, weights, dist = random_problem(31, 3, 4)
    clipped = clip_confusions(alpha)
    n = 50
    counts = [
        (i, j, m) for i in range(n + 1) for j in range(n + 1 - i) for m in range(n + 1 - i - j)
    ]
    grid = np.array([(i, j, m, n - i - j - m) for i, j, m in counts]) / n
    for y in range(4):
        problem = LabelProblem(y, clipped[:, y, :], weights * dist[:, y])
        row, value = vertex.vertex_minimum(problem)
        values = direct_objective(grid, problem.conf, problem.mass)
        best = values.min()
        for index in np.argsort(values)[:6]:
            res = minimize(
                lambda x, p=problem: simplex_value(x, p),
                grid[index, :3],
                method="Nelder-Mead",
                options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 6000},
            )
            best = min(best, res.fun)
        assert value <= best + 1e-12
        assert value >= known.lower_bound(problem)[0] - 1e-12
        assert (row >= 0).all() and row.sum() == pytest.approx(1.0, abs=1e-12)


def simplex_value(x, problem):
    row = np.append(x, 1.0 - x.sum())
    if (row < 0).any():
        return 10.0
    return float(direct_objective(row, problem.conf, problem.mass)[0])


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_groups=st.integers(1, 3),
    n_labels=st.integers(2, 4),
    concentration=st.sampled_from([0.3, 1.0, 5.0]),
)
def test_vertex_minimum_is_the_least_value_anywhere(seed, n_groups, n_labels, concentration):
    """The vertex value is F at its row, at least the lower bound and at most F at 3000 random
    points of the simplex and at every group's own row."""
    rng = np.random.default_rng(seed)
    conf = clip_confusions(rng.dirichlet(np.full(n_labels, concentration), size=n_groups))
    problem = LabelProblem(0, conf, rng.dirichlet(np.ones(n_groups)) * 0.7)
    found = vertex.vertex_minimum(problem)
    assert found is not None
    row, value = found
    points = np.concatenate([rng.dirichlet(np.ones(n_labels), size=3000), conf])
    assert value == pytest.approx(float(problem.value(row)), abs=1e-15)
    assert value <= problem.value(points).min() + 1e-12
    assert value >= known.lower_bound(problem)[0] - 1e-12


def test_vertex_minimum_is_invariant_to_group_order_and_respects_its_budget():
    alpha, weights, dist = random_problem(32, 6, 3)
    clipped = clip_confusions(alpha)
    problem = LabelProblem(1, clipped[:, 1, :], weights * dist[:, 1])
    perm = np.random.default_rng(0).permutation(6)
    moved = LabelProblem(1, problem.conf[perm], problem.mass[perm])
    row, value = vertex.vertex_minimum(problem)
    moved_row, moved_value = vertex.vertex_minimum(moved)
    assert moved_value == pytest.approx(value, abs=1e-15)
    assert np.allclose(moved_row, row, atol=1e-12)
    work = vertex.vertex_count(6, 3) * 3 * (3 + 6)
    assert vertex.vertex_minimum(problem, budget=work) is not None
    assert vertex.vertex_minimum(problem, budget=work - 1) is None


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_null_directions_are_orthogonal_to_the_normals(k):
    rng = np.random.default_rng(k)
    normals = rng.normal(size=(40, k - 1, k))
    if k > 2:
        normals[0, -1] = 2.0 * normals[0, 0]  # dependent rows: no direction
    directions = vertex._null_directions(normals)
    assert np.allclose(np.einsum("cjk,ck->cj", normals, directions), 0.0, atol=1e-12)
    if k > 2:
        assert np.allclose(directions[0], 0.0, atol=1e-12)
    reference = np.linalg.svd(normals[1:])[2][:, -1]  # unit null vectors
    scaled = directions[1:] / np.linalg.norm(directions[1:], axis=1, keepdims=True)
    assert np.allclose(np.abs(np.einsum("ck,ck->c", scaled, reference)), 1.0, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_groups=st.integers(2, 7), n_labels=st.integers(3, 6))
@example(seed=10531, n_groups=2, n_labels=5)  # the vertex minimum 2.6e-18 below LB_0
def test_further_search_never_worsens_the_authors_bounds(seed, n_groups, n_labels):
    """The vertex search and the extra starts only add candidates to greedy+LM: against the
    authors' method (no extra starts, no vertex search) lower, mean, greedy and mean+LM are
    the same and greedy+LM and upper are never higher."""
    alpha, weights, dist = random_problem(seed, n_groups, n_labels)
    clipped = clip_confusions(alpha)
    mass = weights[:, None] * dist
    orders = random_orders(np.random.default_rng(seed), 3, n_labels)
    ours = known.solve_known(clipped, mass, orders)
    authors = known.solve_known(clipped, mass, orders, local_starts=0, vertex_budget=0)
    # the same lower bound, except where an upper bound met it and came out below it by
    # rounding: solve_known then lowers LB_y to that upper bound (so lower <= upper), and a
    # further search meets it more often than the authors' method
    same = ours.lower == authors.lower
    lowered = (ours.lower == ours.upper) & (ours.lower < authors.lower)
    assert (same | lowered).all()
    assert np.allclose(ours.lower, authors.lower, rtol=1e-12, atol=0.0)
    for method in ("mean", "greedy"):
        assert np.array_equal(ours.bounds[method], authors.bounds[method])
    # mean+LM stops early only once it meets the lower bound or the global minimum
    floor = np.where(ours.exact, ours.bounds["greedy_lm"], ours.lower)
    assert (
        (ours.bounds["mean_lm"] == authors.bounds["mean_lm"])
        | (ours.bounds["mean_lm"] <= floor + 1e-12)
    ).all()
    assert (ours.bounds["greedy_lm"] <= authors.bounds["greedy_lm"] + 1e-12).all()
    assert (ours.upper <= authors.upper + 1e-12).all()


def test_local_search_stops_at_its_floor():
    alpha, weights, dist = random_problem(33, 5, 4)
    clipped = clip_confusions(alpha)
    problem = LabelProblem(0, clipped[:, 0, :], weights * dist[:, 0])
    start = known.mean_row(problem)
    free = local.local_minimum(problem, start)
    assert free.iterations > 1
    stopped = local.local_minimum(problem, start, floor=float(problem.value(start)))
    assert stopped.iterations == 0 and np.array_equal(stopped.row, start / start.sum())
    assert local.local_minimum(problem, start, floor=free.value).value <= free.value + 1e-12


def test_lower_bound_matches_brute_force_per_column():
    """LB_y = max_z min_a sum_g c_g eta(a, alpha_g^{yz}), each inner minimum on a fine grid."""
    alpha, weights, dist = random_problem(7, 5, 4)
    res = dcp_from_confusion(alpha, weights, dist, random_state=0, local_search=False)
    grid = np.linspace(0.0, 1.0, 200001)
    for y, label in enumerate(res.per_label):
        mass = weights * dist[:, y]
        per_z = [(eta(grid[:, None], alpha[None, :, y, z]) @ mass).min() for z in range(4)]
        # the grid minimum overestimates by at most slope x step / 2
        assert label.lower == pytest.approx(max(per_z), abs=2e-4)
        assert label.lower <= max(per_z) + 1e-12


# --------------------------------------------------------------------------- invariances


def test_invariant_to_permuting_groups():
    alpha, weights, dist = random_problem(21, 6, 4)
    orders = random_orders(np.random.default_rng(0), 5, 4)
    perm = np.random.default_rng(1).permutation(6)
    base = dcp_from_confusion(alpha, weights, dist, permutations=orders)
    moved = dcp_from_confusion(alpha[perm], weights[perm], dist[perm], permutations=orders)
    assert moved.lower == pytest.approx(base.lower, abs=1e-12)
    for method in ("mean", "greedy"):
        assert moved.bounds[method] == pytest.approx(base.bounds[method], abs=1e-12)
    # the LPs see the groups in another order; HiGHS may stop at another point within the
    # step tolerance (1e-5) of the sequential LP
    assert moved.upper == pytest.approx(base.upper, abs=1e-5)
    assert np.allclose(moved.unfair_fraction, base.unfair_fraction[perm], atol=1e-4)


def test_invariant_to_relabelling_classes():
    alpha, weights, dist = random_problem(22, 5, 5)
    orders = random_orders(np.random.default_rng(2), 5, 5)
    sigma = np.random.default_rng(3).permutation(5)  # label y becomes sigma[y]
    inverse = np.argsort(sigma)
    relabelled = alpha[:, inverse][:, :, inverse]
    base = dcp_from_confusion(alpha, weights, dist, permutations=orders, local_search=False)
    moved = dcp_from_confusion(
        relabelled,
        weights,
        dist[:, inverse],
        permutations=mapped_orders(orders, sigma),
        local_search=False,
    )
    assert moved.lower == pytest.approx(base.lower, abs=1e-12)
    assert moved.upper == pytest.approx(base.upper, abs=1e-12)
    assert np.allclose(moved.baseline[np.ix_(sigma, sigma)], base.baseline, atol=1e-12)
    # with local search: the same up to the sequential-LP step tolerance (see above)
    base_lm = dcp_from_confusion(alpha, weights, dist, permutations=orders)
    moved_lm = dcp_from_confusion(
        relabelled, weights, dist[:, inverse], permutations=mapped_orders(orders, sigma)
    )
    assert moved_lm.upper == pytest.approx(base_lm.upper, abs=1e-5)


def test_zero_mass_cells_contribute_nothing():
    alpha, weights, dist = random_problem(5, 4, 3)
    dist[1] = [0.6, 0.4, 0.0]
    other = alpha.copy()
    other[1, 2] = [1.0, 0.0, 0.0]  # the row of an empty cell is irrelevant
    a = dcp_from_confusion(alpha, weights, dist, random_state=0)
    b = dcp_from_confusion(other, weights, dist, random_state=0)
    assert a.lower == b.lower
    assert a.upper == pytest.approx(b.upper, abs=1e-15)


# --------------------------------------------------------------------------- algorithm parts


@pytest.mark.parametrize("rows, n_groups", [(9, 12), (4, 60), (30, 3)])
def test_greedy_sweep_matches_direct_evaluation(rows, n_groups):
    """The sweep's sub-objective equals sum_g mass_g max(v, eta, eta) evaluated directly at every
    candidate (also with many groups sharing a piece and with zero-mass groups), and the chosen
    candidate is the first minimiser of the direct values."""
    rng = np.random.default_rng(n_groups)
    b = clip_confusions(rng.dirichlet(np.ones(4), size=(rows, n_groups)))
    b1, b2 = b[..., 0], b[..., 1] + b[..., 2]
    gamma = rng.uniform(0.05, 0.9, rows)
    gamma[:2] = [1.0, 0.0][:rows]
    v = rng.uniform(0.0, 0.5, (rows, n_groups)) * (rng.random((rows, n_groups)) < 0.7)
    v[0] = 0.0
    mass = rng.random((rows, n_groups)) * (rng.random((rows, n_groups)) < 0.8)
    inflections = greedy._inflections(b1, b2, v, gamma)
    cands = greedy._greedy_candidates(b1, b2, gamma, mass > 0, inflections)
    swept = greedy._step_objective(cands, b1, b2, v, gamma, mass)
    ok = np.isfinite(cands)
    a = np.where(ok, cands, 0.0)[..., None]
    terms = np.maximum(
        np.maximum(v[:, None, :], eta(a, b1[:, None, :])),
        eta(gamma[:, None, None] - a, b2[:, None, :]),
    )
    direct = np.where(ok, (terms * mass[:, None, :]).sum(axis=2), np.inf)
    assert ok.sum() >= min(100, ok.size)
    scale = mass.sum(axis=1, keepdims=True)
    assert np.array_equal(np.isfinite(swept), ok)
    assert np.allclose(swept[ok], direct[ok], rtol=0, atol=1e-13 * scale.max())
    chosen = greedy._greedy_step(b1, b2, v, gamma, mass)
    first = np.argmax(direct <= direct.min(axis=1, keepdims=True) + TIE_TOL, axis=1)
    assert np.array_equal(chosen, cands[np.arange(rows), first])


def test_greedy_step_is_optimal_over_a_fine_grid():
    """The chosen a_z is as good as every point of a fine grid of [0, gamma] (up to rounding)."""
    rng = np.random.default_rng(4)
    b = clip_confusions(rng.dirichlet(np.full(4, 3.0), size=(6, 8)))
    b1, b2 = b[..., 0], b[..., 1] + b[..., 2]
    gamma = rng.uniform(0.2, 0.9, 6)
    v = rng.uniform(0.0, 0.3, (6, 8))
    mass = rng.random((6, 8))
    chosen = greedy._greedy_step(b1, b2, v, gamma, mass)

    def values(a, r):
        a = np.atleast_1d(a)[:, None]
        terms = np.maximum(np.maximum(v[r], eta(a, b1[r])), eta(gamma[r] - a, b2[r]))
        return terms @ mass[r]

    for r in range(6):
        grid = np.linspace(0.0, gamma[r], 20001)
        assert values(chosen[r], r)[0] <= values(grid, r).min() + 1e-4
        assert 0.0 <= chosen[r] <= gamma[r]


class LinprogLP:
    """The sequential-LP step solved by SciPy's linprog (HiGHS) from matrices built here."""

    def __init__(self, conf, mass):
        self.conf, self.mass, self.k = conf, mass, conf.shape[1]

    def solve(self, slopes, rhs):
        n_groups, k = self.conf.shape
        rows = np.arange(n_groups * k)
        a_ub = np.zeros((n_groups * k, k + n_groups))
        a_ub[rows, rows % k] = slopes.ravel()  # d_gz a_z - f_g <= rhs_gz, row g*K + z
        a_ub[rows, k + rows // k] = -1.0
        res = linprog(
            np.concatenate([np.zeros(k), self.mass]),
            A_ub=a_ub,
            b_ub=rhs.ravel(),
            A_eq=np.concatenate([np.ones(k), np.zeros(n_groups)])[None, :],
            b_eq=[1.0],
            bounds=(0.0, 1.0),
            method="highs",
        )
        return res.x if res.status == 0 else None


def linearisation(a, conf):
    """Slopes and right-hand sides of the LP at a, from the shared eta and its derivative."""
    slopes = eta_grad_a(a[None, :], conf)
    return slopes, slopes * a - eta(a[None, :], conf)


def test_linearisation_matches_eta_and_its_slope_also_on_the_boundary():
    alpha, weights, dist = random_problem(16, 6, 4)
    conf, mass = clip_confusions(alpha)[:, 2, :], weights * dist[:, 2]
    points = np.concatenate([np.random.default_rng(0).dirichlet(np.ones(4), 5), np.eye(4)])
    points[0, :2] = [0.0, points[0, :2].sum()]
    for a in points:
        point = local.linearise(a, conf, mass)
        slopes, rhs = linearisation(a, conf)
        assert np.allclose(point.slopes, slopes, rtol=1e-13, atol=0)
        assert np.allclose(point.rhs, rhs, rtol=1e-12, atol=1e-15)
        assert point.value == pytest.approx(direct_objective(a, conf, mass)[0], abs=1e-14)
        assert np.allclose(point.unfair, eta(a[None, :], conf).max(axis=1), atol=1e-15)


def test_highspy_lp_step_equals_linprog_on_the_same_lp():
    """Each sequential-LP step (highspy, warm-started) reaches the optimal value linprog finds for
    the same LP built here, at a point feasible for it; where the optimum is unique (checked by
    linprog over the optimal face) both give the same point. Also at points on the boundary."""
    alpha, weights, dist = random_problem(8, 8, 5)
    clipped = clip_confusions(alpha)
    rng = np.random.default_rng(3)
    unique = 0
    for y in range(5):
        conf, mass = clipped[:, y, :], weights * dist[:, y]
        ours, oracle = local.LinearisedLP(conf, mass), LinprogLP(conf, mass)
        cost = np.concatenate([np.zeros(5), mass])
        points = rng.dirichlet(np.ones(5), size=4)
        points[0, :2] = [0.0, points[0, :2].sum()]  # a_0 = 0
        points[1] = np.eye(5)[y]  # a corner: a_y = 1
        for a in points:
            slopes, rhs = linearisation(a, conf)
            x, x_ref = ours.solve(slopes, rhs), oracle.solve(slopes, rhs)
            assert x @ cost == pytest.approx(x_ref @ cost, abs=1e-10)
            assert (slopes * x[:5] - x[5:, None] <= rhs + 1e-9).all()
            assert x[:5].sum() == pytest.approx(1.0, abs=1e-9)
            assert ((x >= -1e-12) & (x <= 1 + 1e-12)).all()
            if optimum_is_unique(oracle, slopes, rhs, x_ref @ cost):
                unique += 1
                assert np.allclose(x, x_ref, atol=1e-7)
    assert unique >= 3  # the comparison of points is not vacuous


def optimum_is_unique(oracle, slopes, rhs, value):
    """Whether every coordinate of the LP's optimal face is a single value (2 LPs each)."""
    n_groups, k = oracle.conf.shape
    rows = np.arange(n_groups * k)
    a_ub = np.zeros((n_groups * k + 1, k + n_groups))
    a_ub[rows, rows % k] = slopes.ravel()
    a_ub[rows, k + rows // k] = -1.0
    a_ub[-1, k:] = oracle.mass  # stay on the optimal face
    b_ub = np.append(rhs.ravel(), value + 1e-10)
    a_eq = np.concatenate([np.ones(k), np.zeros(n_groups)])[None, :]
    for j in range(k + n_groups):
        for sign in (1.0, -1.0):
            c = np.zeros(k + n_groups)
            c[j] = sign
            res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=(0.0, 1.0))
            if sign > 0:
                low = res.fun
            elif -res.fun - low > 1e-7:
                return False
    return True


def test_local_minimum_with_highspy_equals_local_minimum_with_linprog():
    alpha, weights, dist = random_problem(8, 8, 5)
    clipped = clip_confusions(alpha)
    for y in range(5):
        problem = LabelProblem(y, clipped[:, y, :], weights * dist[:, y])
        start = known.mean_row(problem)
        ours = local.local_minimum(problem, start)
        reference = local.local_minimum(problem, start, lp=LinprogLP(problem.conf, problem.mass))
        assert ours.value == pytest.approx(reference.value, abs=1e-8)
        assert np.allclose(ours.row, reference.row, atol=1e-6)
        assert ours.value <= float(problem.value(start))


def test_rejected_lp_raises_backend_error():
    alpha, weights, dist = random_problem(15, 3, 3)
    clipped = clip_confusions(alpha)
    lp = local.LinearisedLP(clipped[:, 0, :], weights * dist[:, 0])
    slopes, rhs = linearisation(np.full(3, 1 / 3), clipped[:, 0, :])
    assert lp.solve(slopes, rhs) is not None
    slopes[0, 0] = np.inf  # HiGHS refuses infinite coefficients
    with pytest.raises(BackendError, match="HiGHS rejected"):
        lp.solve(slopes, rhs)


def test_known_regime_prints_nothing(capfd):
    alpha, weights, dist = random_problem(14, 5, 6)
    res = dcp_from_confusion(alpha, weights, dist, random_state=0)
    assert res.lower <= res.upper
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_known_regime_prints_nothing_in_a_fresh_interpreter():
    """HiGHS prints a banner on a process's first solver unless output is off from the start: a
    fresh interpreter shows it, where a test process may already have created a solver."""
    code = (
        "import numpy as np\n"
        "from trustlab.fairness import dcp_from_confusion\n"
        "alpha = np.random.default_rng(0).dirichlet(np.ones(6), size=(3, 6))\n"
        "res = dcp_from_confusion(alpha, [0.2, 0.3, 0.5], np.full((3, 6), 1 / 6), random_state=0)\n"
        "assert res.lower <= res.upper\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"" and done.stderr == b""


def test_local_minimisation_never_increases_and_improves_the_mean():
    alpha, weights, dist = random_problem(9, 10, 6)
    res = dcp_from_confusion(alpha, weights, dist, random_state=0)
    assert res.bounds["mean_lm"] < res.bounds["mean"] - 1e-3
    assert res.bounds["greedy_lm"] <= res.bounds["greedy"]


def test_same_seed_same_result_and_injected_orders():
    alpha, weights, dist = random_problem(10, 5, 5)
    a = dcp_from_confusion(alpha, weights, dist, random_state=7)
    b = dcp_from_confusion(alpha, weights, dist, random_state=7)
    assert a.to_dict() == b.to_dict()
    orders = random_orders(np.random.default_rng(7), 10, 5)
    c = dcp_from_confusion(alpha, weights, dist, permutations=orders, local_search=False)
    d = dcp_from_confusion(alpha, weights, dist, permutations=orders[:1], local_search=False)
    assert c.bounds["greedy"] <= d.bounds["greedy"]  # best of 10 attempts vs the first alone


# --------------------------------------------------------------------------- inputs from records


def records(seed=0, n=4000, n_labels=4):
    rng = np.random.default_rng(seed)
    groups = rng.choice(np.array(["north", "south", "east"]), size=n, p=[0.5, 0.3, 0.2])
    y_true = rng.integers(0, n_labels, n)
    noise = rng.integers(0, n_labels, n)
    keep = rng.random(n) < np.where(groups == "north", 0.8, 0.6)
    return y_true, np.where(keep, y_true, noise), groups


@pytest.mark.parametrize("weighted", [False, True])
def test_inputs_match_fairlearn_metricframe(weighted):
    from fairlearn.metrics import MetricFrame, count
    from sklearn.metrics import confusion_matrix

    y_true, y_pred, groups = records()
    labels = [0, 1, 2, 3]
    weights = np.random.default_rng(1).uniform(0.5, 2.0, y_true.size) if weighted else None

    def normalised(yt, yp, sample_weight=None):
        return confusion_matrix(
            yt, yp, labels=labels, normalize="true", sample_weight=sample_weight
        )

    def raw(yt, yp, sample_weight=None):
        return confusion_matrix(yt, yp, labels=labels, sample_weight=sample_weight)

    params = {"alpha": {"sample_weight": weights}, "raw": {"sample_weight": weights}}
    frame = MetricFrame(
        metrics={"alpha": normalised, "raw": raw, "count": count},
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
        sample_params=params if weighted else None,
    )
    inputs = dcp_inputs(y_true, y_pred, groups, labels=labels, sample_weight=weights)
    by_group = frame.by_group
    assert list(inputs.groups) == list(by_group.index)
    for g, name in enumerate(inputs.groups):
        assert np.allclose(inputs.alpha[g], by_group.loc[name, "alpha"], rtol=0, atol=1e-12)
        cm = by_group.loc[name, "raw"]
        assert np.allclose(inputs.label_dist[g], cm.sum(1) / cm.sum(), rtol=0, atol=1e-12)
        assert np.allclose(inputs.pred_dist[g], cm.sum(0) / cm.sum(), rtol=0, atol=1e-12)
        if weighted:
            assert inputs.counts[g].sum() == pytest.approx(cm.sum(), rel=1e-12)
    if weighted:
        totals = np.array([by_group.loc[name, "raw"].sum() for name in inputs.groups])
    else:
        totals = by_group["count"].to_numpy(dtype=float)
    assert np.allclose(inputs.group_weights, totals / totals.sum(), rtol=0, atol=1e-12)
    assert inputs.empty_cells == ()


def test_binary_dcp_is_zero_iff_equalized_odds_holds():
    from fairlearn.metrics import equalized_odds_difference

    def group(n_pos, n_neg, tp, fp):
        y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
        pred = np.r_[
            np.ones(tp, int), np.zeros(n_pos - tp, int), np.ones(fp, int), np.zeros(n_neg - fp, int)
        ]
        return y, pred

    # equal TPR (0.75) and FPR (0.1) with different base rates: equalized odds holds
    fair = [group(40, 60, 30, 6), group(160, 40, 120, 4)]
    # equal FPR, TPR 0.75 against 0.5: it does not
    unfair = [group(40, 60, 30, 6), group(160, 40, 80, 4)]
    for parts, is_fair in ((fair, True), (unfair, False)):
        y = np.concatenate([p[0] for p in parts])
        pred = np.concatenate([p[1] for p in parts])
        groups = np.repeat(["a", "b"], [parts[0][0].size, parts[1][0].size])
        eod = equalized_odds_difference(y, pred, sensitive_features=groups)
        res = multiclass_dcp(y, pred, groups, aggregate=False, random_state=0)
        assert (eod == 0) == is_fair
        assert (res.known.lower == 0 and res.known.upper == 0) == is_fair
        if not is_fair:
            assert res.known.lower > 0.01


def test_empty_cell_returns_result_and_is_reported():
    y_true, y_pred, groups = records(seed=3, n=600, n_labels=3)
    drop = (groups == "east") & (y_true == 2)
    y_true, y_pred, groups = y_true[~drop], y_pred[~drop], groups[~drop]
    inputs = dcp_inputs(y_true, y_pred, groups)
    assert inputs.empty_cells == (("east", 2),)
    east = inputs.groups.index("east")
    pooled = inputs.counts[:, 2, :].sum(axis=0)
    assert np.allclose(inputs.alpha[east, 2], pooled / pooled.sum(), atol=1e-15)
    assert inputs.label_dist[east, 2] == 0.0
    res = multiclass_dcp(y_true, y_pred, groups, aggregate=False, random_state=0)
    assert res.known.lower <= res.known.upper
    assert "empty cells" in res.summary() and "'east', 2" in res.summary()


def test_string_labels_and_label_order():
    y_true = np.array(["cat", "dog", "eel", "dog", "cat", "eel"] * 5)
    y_pred = np.array(["cat", "dog", "dog", "dog", "eel", "eel"] * 5)
    groups = np.array(["x", "y"] * 15)
    inputs = dcp_inputs(y_true, y_pred, groups, labels=["eel", "dog", "cat"])
    assert inputs.labels == ("eel", "dog", "cat")
    total = inputs.counts.sum(axis=0)
    assert total[0, 0] == np.sum((y_true == "eel") & (y_pred == "eel"))
    assert total[2, 2] == np.sum((y_true == "cat") & (y_pred == "cat"))


# --------------------------------------------------------------------------- bad input


GOOD_ALPHA, GOOD_W, GOOD_PI = random_problem(0, 3, 3)


def _with(array, index, value):
    array = np.array(array, dtype=float)
    array[index] = value
    return array


BAD_KNOWN = [
    ("alpha", dict(alpha=_with(GOOD_ALPHA, (0, 0, 0), 0.9))),  # row not stochastic
    ("alpha", dict(alpha=_with(GOOD_ALPHA, (1, 1, 1), np.nan))),
    ("alpha", dict(alpha=GOOD_ALPHA[:, :2, :2])),  # shape mismatch with label_dist
    ("group_weights", dict(group_weights=[1.2, -0.1, -0.1])),
    ("group_weights", dict(group_weights=[0.5, 0.5])),  # 2 weights for 3 groups
    ("label_dist", dict(label_dist=_with(GOOD_PI, (2, 0), np.nan))),
    ("label_dist", dict(label_dist=GOOD_PI * 2)),
    ("group_weights", dict(alpha=GOOD_ALPHA[:1], group_weights=[1.0], label_dist=GOOD_PI[:1])),
    (
        "label_dist",
        dict(alpha=np.ones((3, 1, 1)), label_dist=np.ones((3, 1))),
    ),  # fewer than 2 labels
    ("permutations", dict(permutations=np.zeros((2, 3, 2), int))),
    ("permutations", dict(permutations=np.zeros((2, 3), int))),
    ("greedy_attempts", dict(greedy_attempts=0)),
    ("labels", dict(labels=["a", "b"])),
    ("groups", dict(groups=["a", "a", "b"])),
    ("random_state", dict(random_state="seed")),
]


@pytest.mark.parametrize("argument, change", BAD_KNOWN)
def test_bad_known_regime_input_names_the_argument(argument, change):
    kwargs = dict(alpha=GOOD_ALPHA, group_weights=GOOD_W, label_dist=GOOD_PI) | change
    with pytest.raises(InputError) as err:
        dcp_from_confusion(**kwargs)
    assert argument in str(err.value)


BAD_AGGREGATE = [
    ("pred_dist", dict(pred_dist=GOOD_PI[:2])),
    ("pred_dist", dict(pred_dist=_with(GOOD_PI, (0, 0), -0.5))),
    ("label_dist", dict(label_dist=GOOD_PI[:, :2] / GOOD_PI[:, :2].sum(1, keepdims=True))),
    ("beta", dict(beta=1.5)),
    ("n_restarts", dict(n_restarts=0)),
    ("init", dict(init=(np.eye(3), np.ones((2, 3, 3)) / 3))),
    ("init", dict(init=np.eye(3))),
    ("n_jobs", dict(n_jobs=0)),
]


@pytest.mark.parametrize("argument, change", BAD_AGGREGATE)
def test_bad_aggregate_input_names_the_argument(argument, change):
    kwargs = dict(group_weights=GOOD_W, label_dist=GOOD_PI, pred_dist=GOOD_PI) | change
    with pytest.raises(InputError) as err:
        dcp_from_aggregates(**kwargs)
    assert argument in str(err.value)


Y3 = [0, 1, 2, 0, 1, 2]
P3 = [0, 1, 1, 0, 2, 2]
G3 = ["a", "a", "a", "b", "b", "b"]
BAD_RECORDS = [
    ("y_pred", dict(y_pred=P3[:5])),  # mismatched lengths
    ("y_pred", dict(labels=[0, 1, 3], y_true=[0, 1, 0, 0, 1, 0])),  # value outside labels=
    ("y_true", dict(labels=[0, 1])),
    ("groups", dict(groups=["a"] * 6)),  # one group only
    ("y_true", dict(y_true=[0] * 6, y_pred=[0] * 6)),  # fewer than 2 labels, none given
    ("labels", dict(y_true=[0] * 6, y_pred=[0] * 6, labels=[0])),  # fewer than 2 labels given
    ("y_true", dict(y_true=[0.0, 1.0, np.nan, 0.0, 1.0, 2.0])),
    ("sample_weight", dict(sample_weight=[1, 1, 1, -1, 1, 1])),
    ("sample_weight", dict(sample_weight=[1, 1, 1])),
    ("sample_weight", dict(sample_weight=[1, 1, np.nan, 1, 1, 1])),
]


@pytest.mark.parametrize("argument, change", BAD_RECORDS)
def test_bad_records_name_the_argument(argument, change):
    kwargs = dict(y_true=Y3, y_pred=P3, groups=G3) | change
    with pytest.raises(InputError) as err:
        dcp_inputs(**kwargs)
    assert argument in str(err.value)
    with pytest.raises(InputError):
        multiclass_dcp(**kwargs, aggregate=False)


def test_labels_of_another_type_name_y_pred_and_one_label_names_the_data():
    """Int true labels with text predictions: the predictions are named (y_true was, with the
    concatenation's strings); one label in the data names y_true, not labels= never given."""
    with pytest.raises(InputError) as err:
        dcp_inputs([0, 1, 2, 0], ["0", "1", "2", "1"], ["a", "a", "b", "b"])
    assert err.value.argument == "y_pred"
    assert str(err.value).startswith(
        "y_pred: expected predicted labels of the same type as the true labels (numbers, dtype "
        "int64), got text (dtype <U1, e.g. '0')"
    )
    strings = np.array(["x", "y", "x", "y"], dtype=object)
    with pytest.raises(InputError, match=r"^y_pred: .*\(text, dtype object\), got numbers"):
        multiclass_dcp(strings, [0.5, 1.0, 2.0, 3.0], ["a", "a", "b", "b"], aggregate=False)
    with pytest.raises(InputError) as err:
        dcp_inputs([1] * 4, [1] * 4, ["a", "a", "b", "b"])
    assert err.value.argument == "y_true"
    message = "y_true: expected at least 2 distinct labels among the true and predicted labels"
    assert str(err.value) == message + ", got 1 (1)"
    # numbers of two dtypes are one type
    assert dcp_inputs([0, 1, 1, 0], [0.0, 1.0, 1.0, 1.0], ["a", "a", "b", "b"]).labels == (0, 1)


# --------------------------------------------------------------------------- aggregate wiring


def test_dcp_from_aggregates_wiring():
    alpha, weights, dist = random_problem(12, 3, 3)
    pred = np.einsum("gy,gyz->gz", dist, alpha)
    res = dcp_from_aggregates(weights, dist, pred, n_restarts=2, random_state=0, groups="abc")
    assert isinstance(res, AggregateDCPResult)
    assert res.estimate >= 0.0
    assert res.estimate == min(res.restart_values)
    assert res.baseline.shape == (3, 3) and res.confusions.shape == (3, 3, 3)
    assert len(res.restart_values) == len(res.iterations) == len(res.converged) == 2
    assert res.groups == ("a", "b", "c") and res.labels == (0, 1, 2)
    again = dcp_from_aggregates(weights, dist, pred, n_restarts=2, random_state=0, groups="abc")
    assert again.restart_values == res.restart_values


def test_multiclass_dcp_warm_starts_the_aggregate_regime_from_the_known_solution():
    y_true, y_pred, groups = records(seed=5, n=1500, n_labels=3)
    res = multiclass_dcp(y_true, y_pred, groups, n_restarts=2, random_state=0)
    assert res.aggregate is not None
    # the first start is (known baseline, true confusion matrices), which scores about upper
    assert res.aggregate.estimate <= res.known.upper + 1e-4


# --------------------------------------------------------------------------- results


def test_results_serialise_summarise_and_plot():
    y_true, y_pred, groups = records(seed=6, n=900, n_labels=3)
    res = multiclass_dcp(y_true, y_pred, groups, n_restarts=2, random_state=0)
    for part in (res, res.known, res.aggregate, res.inputs):
        text = json.dumps(part.to_dict())
        assert "NaN" not in text and "Infinity" not in text
        assert isinstance(part.summary(), str)
    assert f"{res.known.lower:.4f}" in res.known.summary()
    assert f"{res.known.upper:.4f}" in res.known.summary()
    assert f"{res.aggregate.estimate:.4f}" in res.aggregate.summary()
    for part in (res, res.known, res.aggregate):
        ax = part.plot()
        assert isinstance(ax, matplotlib.axes.Axes)
        plt.close(ax.figure)
    assert f"{res.known.upper:.4f}" in res.known.plot().get_title()
    plt.close("all")
    known_dict = res.known.to_dict()
    assert known_dict["per_label"][0]["label"] == 0
    assert res.known.per_label[0]["upper"] == res.known.per_label[0].upper


def test_to_dict_keeps_the_json_layout():
    y_true, y_pred, groups = records(seed=7, n=600, n_labels=3)
    res = multiclass_dcp(y_true, y_pred, groups, n_restarts=1, random_state=0).to_dict()
    assert list(res) == ["inputs", "known", "aggregate"]
    assert list(res["known"]) == [
        "regime",
        "lower",
        "upper",
        "ratio",
        "bounds",
        "per_label",
        "baseline",
        "unfair_fraction",
        "labels",
        "groups",
        "group_weights",
    ]
    assert res["known"]["regime"] == "known" and res["aggregate"]["regime"] == "aggregate"
    assert list(res["aggregate"])[1:] == [
        "estimate",
        "baseline",
        "confusions",
        "restart_values",
        "iterations",
        "converged",
        "beta",
        "labels",
        "groups",
    ]
    assert list(res["known"]["per_label"][0]) == list(LABEL_FIELDS)
    assert res["inputs"]["groups"] == ["east", "north", "south"]
    assert all(isinstance(cell, list) for cell in res["inputs"]["empty_cells"])


LABEL_FIELDS = (
    "label",
    "mass",
    "lower",
    "upper",
    "mean",
    "greedy",
    "mean_lm",
    "greedy_lm",
    "method",
)


def test_unbounded_ratio_is_none_in_json():
    alpha, weights, dist = random_problem(17, 2, 2)
    res = dcp_from_confusion(alpha, weights, dist, random_state=0)
    infinite = DCPResult(**{**res.__dict__, "ratio": float("inf")})
    assert infinite.to_dict()["ratio"] is None
    assert json.loads(json.dumps(infinite.to_dict(), allow_nan=False))["ratio"] is None


def test_ratio_conventions():
    alpha, weights, dist = random_problem(13, 3, 3)
    same = np.broadcast_to(alpha[0], alpha.shape)
    assert dcp_from_confusion(same, weights, dist, random_state=0).ratio == 1.0
    res = dcp_from_confusion(alpha, weights, dist, random_state=0)
    assert isinstance(res, DCPResult)
    assert res.ratio == pytest.approx(res.upper / res.lower)
    assert res.ratio >= 1.0 - 1e-12


def test_eta_slope_matches_finite_differences_and_is_finite_at_the_ends():
    from trustlab.fairness._eta import eta_grad_a

    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.05, 0.95, 200), rng.uniform(0.05, 0.95, 200)
    a = np.where(np.abs(a - b) < 1e-3, a + 2e-3, a)  # keep off the kink
    h = 1e-7
    numeric = (eta(a + h, b) - eta(a - h, b)) / (2 * h)
    assert np.allclose(eta_grad_a(a, b), numeric, rtol=1e-5, atol=1e-6)
    ends = eta_grad_a(np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.3, 0.3]))
    assert np.isfinite(ends).all()
    assert ends.tolist() == pytest.approx([0.0, 1.0, -0.7, 0.3])

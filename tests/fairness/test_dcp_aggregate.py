"""Tests of the aggregate-regime DCP solver (spec 01, "Unknown regime").

Oracles: explicit-loop evaluations of the objective and of the constraints written here, SciPy's
linprog on the beta = 0 problem (then J is linear and its global minimum is an LP) and on each
group's problem for a fixed baseline (both eta branches as cuts), the known-regime upper bound
for a warm start, exact zero on equalized-odds-fair aggregates, and the authors' joint
sequential LP (``dcp_joint_reference.py`` beside this file) for trustlab's reduced method.
"""

from __future__ import annotations

import json

import dcp_joint_reference as joint
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from trustlab.fairness import dcp_from_confusion
from trustlab.fairness._aggregate import (
    AggregateProblem,
    aggregate_objective,
    baseline_in_bounds,
    draw_starts,
    smooth_rows,
    solve_aggregate,
    solve_restart,
)
from trustlab.fairness._group import GroupLP
from trustlab.fairness._reduced import FairMassLP, ReducedProblem, descend, realise

BACKENDS = joint.available_backends()
SMOOTHING = 1.1e-5
ENTRY_MIN = 1e-5


# --------------------------------------------------------------------------- helpers


def random_aggregates(seed: int, n_groups: int, n_labels: int):
    """Uniform random w, pi and alpha_g rows (normalised), and the p they imply."""
    rng = np.random.default_rng(seed)
    weights = rng.random(n_groups)
    weights /= weights.sum()
    label_dist = rng.random((n_groups, n_labels))
    label_dist /= label_dist.sum(axis=1, keepdims=True)
    alpha = rng.random((n_groups, n_labels, n_labels))
    alpha /= alpha.sum(axis=2, keepdims=True)
    pred_dist = np.einsum("gy,gyz->gz", label_dist, alpha)
    return weights, label_dist, pred_dist, alpha


def smoothed(pred_dist):
    shifted = np.asarray(pred_dist) + SMOOTHING
    return shifted / shifted.sum(axis=1, keepdims=True)


def eta_by_formula(a: float, b: float) -> float:
    if a == b:
        return 0.0
    return max(1.0 - b / a, 1.0 - (1.0 - b) / (1.0 - a))


def objective_by_loops(baseline, confusions, weights, label_dist, beta):
    n_groups, n_labels = label_dist.shape
    dcp = error = 0.0
    for g in range(n_groups):
        for y in range(n_labels):
            mass = weights[g] * label_dist[g, y]
            worst = max(
                eta_by_formula(baseline[y, z], confusions[g, y, z]) for z in range(n_labels)
            )
            dcp += mass * worst
            error += mass * (1.0 - confusions[g, y, y])
    return beta * dcp + (1.0 - beta) * error


def constraint_residual(baseline, confusions, label_dist, pred_dist) -> float:
    """Largest violation, computed by loops, of every constraint of the aggregate problem."""
    target = smoothed(pred_dist)
    n_groups, n_labels = label_dist.shape
    worst = 0.0
    for y in range(n_labels):
        worst = max(worst, abs(sum(baseline[y]) - 1.0))
    for g in range(n_groups):
        for y in range(n_labels):
            worst = max(worst, abs(sum(confusions[g, y]) - 1.0))
        for z in range(n_labels):
            implied = sum(label_dist[g, y] * confusions[g, y, z] for y in range(n_labels))
            worst = max(worst, abs(implied - target[g, z]))
    for entry in np.r_[baseline.ravel(), confusions.ravel()]:
        worst = max(worst, ENTRY_MIN - entry, entry - (1.0 - ENTRY_MIN))
    return worst


def random_start(problem, seed: int):
    """The first random start (draw_starts puts the independence start before it)."""
    return draw_starts(problem, 2, np.random.default_rng(seed), None)[1]


def solve(weights, label_dist, pred_dist, *, seed=None, **options):
    """The aggregate solver with its random starts drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return solve_aggregate(weights, label_dist, pred_dist, rng=rng, **options)


# --------------------------------------------------------------------------- constraints


# every back end; highspy also with its interior-point path (used for large LPs) forced on
SOLVER_CASES = [(backend, False) for backend in BACKENDS] + [
    ("highspy", True) for backend in BACKENDS if backend == "highspy"
]


@pytest.mark.parametrize(("backend", "force_ipm"), SOLVER_CASES)
@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), [(2, 3, 0), (4, 4, 1), (3, 2, 2)])
def test_returned_point_satisfies_every_constraint(
    backend, force_ipm, n_groups, n_labels, seed, monkeypatch
):
    if force_ipm:
        monkeypatch.setattr(joint, "HIGHS_IPM_ROWS", 0)
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    trace = joint.solve_from_start(problem, random_start(problem, seed), 250, backend)
    assert constraint_residual(trace.baseline, trace.confusions, label_dist, pred_dist) <= 1e-6


@settings(max_examples=6, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_groups=st.integers(1, 4),
    n_labels=st.integers(2, 4),
    beta=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_solution_satisfies_every_constraint(seed, n_groups, n_labels, beta):
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    solution = solve(weights, label_dist, pred_dist, beta=beta, n_restarts=2, seed=seed)
    residual = constraint_residual(solution.baseline, solution.confusions, label_dist, pred_dist)
    assert residual <= 1e-6


def test_zero_mass_cells_and_zero_predictions_stay_feasible():
    weights, label_dist, _, alpha = random_aggregates(9, 3, 3)
    weights = np.array([0.0, 0.6, 0.4])
    label_dist[1] = [0.0, 0.3, 0.7]
    alpha[2, :, 0] = 0.0  # group 2 never predicts label 0
    alpha /= alpha.sum(axis=2, keepdims=True)
    pred_dist = np.einsum("gy,gyz->gz", label_dist, alpha)
    solution = solve(weights, label_dist, pred_dist, n_restarts=2, seed=0)
    residual = constraint_residual(solution.baseline, solution.confusions, label_dist, pred_dist)
    assert residual <= 1e-6
    at_point = objective_by_loops(solution.baseline, solution.confusions, weights, label_dist, 1.0)
    assert solution.value == pytest.approx(at_point, abs=1e-9)


def test_projection_lands_on_a_nearest_feasible_point():
    weights, label_dist, pred_dist, _ = random_aggregates(3, 3, 3)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    model = joint.CutModel(problem)
    start = np.concatenate([part.ravel() for part in random_start(problem, 3)])
    projected = joint.project(problem, model, start, BACKENDS[0])
    baseline, confusions = model.split(projected)
    assert constraint_residual(baseline, confusions, label_dist, pred_dist) <= 1e-6
    # a feasible point by construction: every group's rows equal its smoothed p
    trivial = np.r_[
        model.split(start)[0].ravel(),
        np.repeat(smoothed(pred_dist)[:, None, :], 3, axis=1).ravel(),
    ]
    assert np.abs(projected - start).sum() <= np.abs(trivial - start).sum() + 1e-7


# --------------------------------------------------------------------------- the objective


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_groups=st.integers(1, 4),
    n_labels=st.integers(2, 4),
    beta=st.floats(0.0, 1.0),
)
def test_beta_mixes_dcp_and_error_as_specified(seed, n_groups, n_labels, beta):
    rng = np.random.default_rng(seed)
    weights, label_dist, _, confusions = random_aggregates(seed, n_groups, n_labels)
    baseline = rng.random((n_labels, n_labels))
    baseline /= baseline.sum(axis=1, keepdims=True)
    value = aggregate_objective(baseline, confusions, weights, label_dist, beta)
    expected = objective_by_loops(baseline, confusions, weights, label_dist, beta)
    assert value == pytest.approx(expected, abs=1e-12)
    dcp = aggregate_objective(baseline, confusions, weights, label_dist, 1.0)
    error = aggregate_objective(baseline, confusions, weights, label_dist, 0.0)
    assert value == pytest.approx(beta * dcp + (1.0 - beta) * error, abs=1e-12)


def test_value_is_the_objective_at_the_best_restart():
    weights, label_dist, pred_dist, _ = random_aggregates(5, 4, 3)
    solution = solve(weights, label_dist, pred_dist, n_restarts=3, seed=1)
    assert solution.value >= 0.0
    at_point = aggregate_objective(solution.baseline, solution.confusions, weights, label_dist, 1.0)
    assert solution.value == pytest.approx(at_point, abs=1e-9)
    by_loops = objective_by_loops(solution.baseline, solution.confusions, weights, label_dist, 1.0)
    assert solution.value == pytest.approx(by_loops, abs=1e-9)
    assert len(solution.restart_values) == len(solution.iterations) == 3
    assert len(solution.converged) == 3
    assert all(value >= solution.value for value in solution.restart_values)
    assert solution.value == min(solution.restart_values)


def test_beta_below_one_scores_the_returned_point_with_that_beta():
    weights, label_dist, pred_dist, _ = random_aggregates(6, 3, 3)
    solution = solve(weights, label_dist, pred_dist, beta=0.4, n_restarts=2, seed=0)
    expected = objective_by_loops(solution.baseline, solution.confusions, weights, label_dist, 0.4)
    assert solution.value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_only_objective_reaches_the_linprog_optimum(backend):
    # beta = 0 makes J linear, so its global minimum is one LP, built here by loops
    n_groups, n_labels = 3, 3
    weights, label_dist, pred_dist, _ = random_aggregates(8, n_groups, n_labels)
    target = smoothed(pred_dist)
    index = {}  # (g, y, z) -> column
    for g in range(n_groups):
        for y in range(n_labels):
            for z in range(n_labels):
                index[g, y, z] = len(index)
    cost = np.zeros(len(index))
    rows, rhs = [], []
    for g in range(n_groups):
        for y in range(n_labels):
            cost[index[g, y, y]] = -weights[g] * label_dist[g, y]
            row = np.zeros(len(index))
            for z in range(n_labels):
                row[index[g, y, z]] = 1.0
            rows.append(row)
            rhs.append(1.0)
        for z in range(n_labels):
            row = np.zeros(len(index))
            for y in range(n_labels):
                row[index[g, y, z]] = label_dist[g, y]
            rows.append(row)
            rhs.append(target[g, z])
    oracle = linprog(
        cost, A_eq=np.array(rows), b_eq=rhs, bounds=(ENTRY_MIN, 1 - ENTRY_MIN), method="highs"
    )
    least_error = oracle.fun + float(np.sum(weights[:, None] * label_dist))
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 0.0)
    trace = joint.solve_from_start(problem, random_start(problem, 8), 250, backend)
    assert trace.value == pytest.approx(least_error, abs=1e-6)


# --------------------------------------------------------------------------- the iteration


# Seeds (with their G, K) on which an unguarded first LP step raises J from the start, as in
# the authors' code; test_unguarded_first_step_would_raise_j checks that this still holds.
RAISING_CASES = [(2, 4, 11), (3, 3, 4), (5, 4, 28)]


def mean_row_start(weights, label_dist, alpha):
    baseline = np.einsum("g,gy,gyz->yz", weights, label_dist, alpha)
    return baseline / baseline.sum(axis=1, keepdims=True), alpha


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), RAISING_CASES)
def test_line_search_is_monotone_from_the_first_iteration(backend, n_groups, n_labels, seed):
    weights, label_dist, pred_dist, alpha = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    known = dcp_from_confusion(alpha, weights, label_dist, random_state=0)
    starts = [
        random_start(problem, seed),
        mean_row_start(weights, label_dist, alpha),
        (known.baseline, alpha),
    ]
    for start in starts:
        trace = joint.solve_from_start(problem, start, 250, backend)
        history = np.array(trace.history)
        assert len(history) >= 2  # at least one accepted step
        assert np.all(np.diff(history) <= 0.0)
        assert trace.value == history[-1]
        at_end = objective_by_loops(trace.baseline, trace.confusions, weights, label_dist, 1.0)
        assert trace.value == pytest.approx(at_end, abs=1e-9)
        assert 1 <= trace.iterations <= 250


@pytest.mark.parametrize("backend", BACKENDS)
def test_unguarded_first_step_would_raise_j(backend):
    # keeps the monotonicity test meaningful: its cases do need the guarded first step
    n_groups, n_labels, seed = RAISING_CASES[0]
    weights, label_dist, pred_dist, alpha = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    known = dcp_from_confusion(alpha, weights, label_dist, random_state=0)
    model = joint.CutModel(problem)
    point = joint.feasible_start(problem, model, (known.baseline, alpha), backend)
    full_step = joint.make_solver(backend).solve(model.update(point, np.inf))[: model.n_point]
    assert problem.objective(*model.split(full_step)) > problem.objective(*model.split(point))
    history = joint.solve_from_start(problem, (known.baseline, alpha), 250, backend).history
    assert history[1] < history[0]


def box_reach(slope, at, radius):
    low, high = max(ENTRY_MIN, at - radius), min(1 - ENTRY_MIN, at + radius)
    return max(slope * (low - at), slope * (high - at))


def test_cuts_are_first_order_expansions_of_both_branches():
    n_groups, n_labels = 3, 3
    weights, label_dist, pred_dist, alpha = random_aggregates(40, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    model = joint.CutModel(problem)
    rng = np.random.default_rng(40)
    baseline = rng.dirichlet(np.ones(n_labels), size=n_labels)
    point = np.r_[baseline.ravel(), alpha.ravel()]
    radius = 0.2
    lp = model.update(point, radius)
    n_cells = n_groups * n_labels * n_labels
    coef = lp.matrix.data[: 6 * n_cells].reshape(2, n_groups, n_labels, n_labels, 3)
    rhs = lp.row_upper[: 2 * n_cells].reshape(2, n_groups, n_labels, n_labels)
    branches = (lambda a, b: 1 - b / a, lambda a, b: 1 - (1 - b) / (1 - a))
    h = 1e-7
    kept = 0
    for k, branch in enumerate(branches):
        for g in range(n_groups):
            for y in range(n_labels):
                for z in range(n_labels):
                    a, b = baseline[y, z], alpha[g, y, z]
                    d_a, d_b, d_c = coef[k, g, y, z]
                    assert d_c == -1.0
                    value = branch(a, b)
                    slope_a = (branch(a + h, b) - branch(a - h, b)) / (2 * h)
                    slope_b = (branch(a, b + h) - branch(a, b - h)) / (2 * h)
                    # the largest the expansion reaches in the box (clipped to the entry bounds)
                    reach = value + box_reach(slope_a, a, radius) + box_reach(slope_b, b, radius)
                    if d_a == 0.0 and d_b == 0.0:  # dropped: far below 0 or never above 0
                        assert value < -1.0 or reach <= 1e-9
                        assert rhs[k, g, y, z] == 1.0  # the redundant row -c <= 1
                        continue
                    kept += 1
                    assert reach > -1e-9 and value >= -1.0
                    assert d_a == pytest.approx(slope_a, rel=1e-6)
                    assert d_b == pytest.approx(slope_b, rel=1e-6)
                    # row: d_a a' + d_b b' - c <= rhs, i.e. c >= value + d_a (a' - a) + d_b (b' - b)
                    assert rhs[k, g, y, z] == pytest.approx(d_a * a + d_b * b - value, abs=1e-12)
    assert kept > n_cells  # both branches contribute cuts
    # at the current point the model is J: the largest cut per cell is max_z eta
    cut_at_point = np.where(
        (coef[..., 0] == 0) & (coef[..., 1] == 0),
        -np.inf,
        coef[..., 0] * baseline[None, None] + coef[..., 1] * alpha[None] - rhs,
    )
    model_value = np.sum(
        weights[:, None] * label_dist * np.maximum(cut_at_point.max(axis=(0, 3)), 0.0)
    )
    assert model_value == pytest.approx(
        objective_by_loops(baseline, alpha, weights, label_dist, 1.0), abs=1e-12
    )


def test_convergence_test_stops_before_max_iter():
    weights, label_dist, pred_dist, _ = random_aggregates(13, 3, 3)
    solution = solve(weights, label_dist, pred_dist, n_restarts=2, seed=0)
    assert all(solution.converged)
    assert max(solution.iterations) < 250
    # the same starts cut at two iterations: a prefix of the same monotone runs
    capped = solve(weights, label_dist, pred_dist, n_restarts=2, seed=0, max_iter=2)
    assert capped.iterations == (2, 2)
    assert capped.converged == (False, False)
    for short, full in zip(capped.restart_values, solution.restart_values, strict=True):
        assert short >= full


# G in {2, 5}, K in {3, 4}; seeds on which an unguarded first step would raise J
@pytest.mark.parametrize(
    ("n_groups", "n_labels", "seed"), [(2, 3, 5), (2, 4, 11), (5, 3, 7), (5, 4, 13)]
)
def test_warm_start_is_never_worsened(n_groups, n_labels, seed):
    weights, label_dist, pred_dist, alpha = random_aggregates(seed, n_groups, n_labels)
    known = dcp_from_confusion(alpha, weights, label_dist, random_state=0)
    start_value = aggregate_objective(known.baseline, alpha, weights, label_dist, 1.0)
    # the start is feasible for the raw p and scores the known-regime upper bound
    assert start_value == pytest.approx(known.upper, abs=1e-6)
    warm = solve(weights, label_dist, pred_dist, init=(known.baseline, alpha), n_restarts=1)
    assert warm.value <= start_value + 1e-4
    with_random = solve(
        weights,
        label_dist,
        pred_dist,
        init=(known.baseline, alpha),
        n_restarts=3,
        seed=0,
    )
    assert with_random.value <= start_value + 1e-3
    assert with_random.restart_values[0] == pytest.approx(warm.value, abs=1e-12)


def test_equalized_odds_fair_aggregates_give_zero():
    rng = np.random.default_rng(4)
    n_groups, n_labels = 4, 3
    common = rng.random((n_labels, n_labels))
    common /= common.sum(axis=1, keepdims=True)
    weights = rng.random(n_groups)
    weights /= weights.sum()
    label_dist = np.tile(rng.dirichlet(np.ones(n_labels)), (n_groups, 1))
    pred_dist = label_dist @ common
    solution = solve(weights, label_dist, pred_dist, n_restarts=3, seed=0)
    assert solution.value <= 1e-3


def test_same_seed_gives_the_same_result():
    weights, label_dist, pred_dist, _ = random_aggregates(30, 3, 3)
    first = solve(weights, label_dist, pred_dist, n_restarts=3, seed=7)
    second = solve(weights, label_dist, pred_dist, n_restarts=3, seed=7)
    assert first.restart_values == second.restart_values
    np.testing.assert_array_equal(first.confusions, second.confusions)
    np.testing.assert_array_equal(first.baseline, second.baseline)


def test_parallel_restarts_equal_serial_ones():
    weights, label_dist, pred_dist, _ = random_aggregates(31, 3, 3)
    serial = solve(weights, label_dist, pred_dist, n_restarts=3, seed=7)
    parallel = solve(weights, label_dist, pred_dist, n_restarts=3, seed=7, n_jobs=2)
    assert parallel.restart_values == serial.restart_values
    assert parallel.iterations == serial.iterations
    np.testing.assert_array_equal(parallel.confusions, serial.confusions)


def test_to_dict_is_json_safe():
    weights, label_dist, pred_dist, _ = random_aggregates(32, 2, 3)
    solution = solve(weights, label_dist, pred_dist, n_restarts=2, seed=0)
    payload = json.loads(json.dumps(solution.to_dict()))
    assert payload["value"] == solution.value
    assert np.array(payload["confusions"]).shape == (2, 3, 3)
    assert payload["restart_values"] == list(solution.restart_values)


# --------------------------------------------------------------------------- reduced method
#
# The default method eliminates the confusion matrices (see trustlab.fairness._reduced): Phi(a) is
# an upper bound on the best J for the baseline a, realised by an explicit feasible point, and
# the exact group step re-solves each group's LP at the end.


def exact_group_value_by_linprog(baseline, weights, label_dist, pred_dist, beta) -> float:
    """min over feasible confusions of J for a fixed baseline: one LP per group, built here by
    loops with both eta branches as cuts (no use of the row-sum identity)."""
    n_groups, n_labels = label_dist.shape
    target = smoothed(pred_dist)
    total = 0.0
    for g in range(n_groups):
        n_b = n_labels * n_labels
        mass = weights[g] * label_dist[g]
        cost = np.r_[np.zeros(n_b), beta * mass]
        for y in range(n_labels):
            cost[y * n_labels + y] -= (1.0 - beta) * mass[y]
        a_ub, b_ub = [], []
        for y in range(n_labels):
            for z in range(n_labels):
                a = baseline[y, z]
                first = np.zeros(n_b + n_labels)  # t_y >= 1 - b/a
                first[y * n_labels + z], first[n_b + y] = -1.0 / a, -1.0
                second = np.zeros(n_b + n_labels)  # t_y >= 1 - (1 - b)/(1 - a)
                second[y * n_labels + z], second[n_b + y] = 1.0 / (1.0 - a), -1.0
                a_ub += [first, second]
                b_ub += [-1.0, a / (1.0 - a)]
        a_eq, b_eq = [], []
        for y in range(n_labels):
            row = np.zeros(n_b + n_labels)
            row[y * n_labels : (y + 1) * n_labels] = 1.0
            a_eq.append(row)
            b_eq.append(1.0)
        for z in range(n_labels):
            row = np.zeros(n_b + n_labels)
            for y in range(n_labels):
                row[y * n_labels + z] = label_dist[g, y]
            a_eq.append(row)
            b_eq.append(target[g, z])
        bounds = [(ENTRY_MIN, 1 - ENTRY_MIN)] * n_b + [(0, None)] * n_labels
        result = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds)
        assert result.status == 0
        total += result.fun + (1.0 - beta) * mass.sum()
    return total


def box_baseline(rng, n_labels):
    baseline = rng.dirichlet(np.ones(n_labels), size=n_labels)
    return ENTRY_MIN + (1.0 - n_labels * ENTRY_MIN) * baseline


def reduced_problem(weights, label_dist, pred_dist, beta):
    problem = AggregateProblem.build(weights, label_dist, pred_dist, beta)
    return problem, ReducedProblem.build(
        problem.cell_mass, problem.label_dist, problem.pred_dist, beta
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_labels=st.integers(2, 6))
def test_complement_branch_never_exceeds_the_first_on_stochastic_rows(seed, n_labels):
    # the identity behind both the group LP and the reduced form
    rng = np.random.default_rng(seed)
    a, b = rng.dirichlet(np.ones(n_labels) * 0.5, size=2)
    first = max(1.0 - b[z] / a[z] for z in range(n_labels) if a[z] > 0)
    both = max(eta_by_formula(a[z], b[z]) for z in range(n_labels) if 0 < a[z] < 1)
    assert both == pytest.approx(first, abs=1e-12)


@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), [(2, 2, 0), (3, 3, 1), (2, 5, 2)])
def test_group_step_reaches_the_linprog_optimum_for_a_fixed_baseline(
    beta, n_groups, n_labels, seed
):
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, beta)
    baseline = box_baseline(np.random.default_rng(seed), n_labels)
    confusions = np.stack(
        [
            GroupLP(problem.cell_mass[g], label_dist[g], problem.pred_dist[g], beta).solve(baseline)
            for g in range(n_groups)
        ]
    )
    assert constraint_residual(baseline, confusions, label_dist, pred_dist) <= 1e-7
    value = objective_by_loops(baseline, confusions, weights, label_dist, beta)
    oracle = exact_group_value_by_linprog(baseline, weights, label_dist, pred_dist, beta)
    assert value == pytest.approx(oracle, abs=1e-7)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_groups=st.integers(1, 4),
    n_labels=st.integers(2, 5),
    beta=st.sampled_from([0.0, 0.5, 1.0]),
    never_predicted=st.booleans(),
    empty_cell=st.booleans(),
)
def test_fair_masses_are_realised_by_feasible_confusions_scoring_at_most_phi(
    seed, n_groups, n_labels, beta, never_predicted, empty_cell
):
    weights, label_dist, _, alpha = random_aggregates(seed, n_groups, n_labels)
    if empty_cell:
        label_dist[0, 0] = 0.0
        label_dist /= label_dist.sum(axis=1, keepdims=True)
    if never_predicted:
        alpha[:, :, 0] = 0.0
        alpha /= alpha.sum(axis=2, keepdims=True)
    pred_dist = np.einsum("gy,gyz->gz", label_dist, alpha)
    problem, reduced = reduced_problem(weights, label_dist, pred_dist, beta)
    baseline = box_baseline(np.random.default_rng(seed), n_labels)
    found = FairMassLP(reduced).solve(baseline)
    confusions = realise(reduced, baseline, found.fair, found.diagonal)
    assert constraint_residual(baseline, confusions, label_dist, pred_dist) <= 1e-6
    at_point = objective_by_loops(baseline, confusions, weights, label_dist, beta)
    assert at_point <= found.value + 1e-9
    assert found.value == pytest.approx(
        reduced.value(baseline, found.fair, found.diagonal), abs=1e-12
    )


@pytest.mark.parametrize("beta", [1.0, 0.5])
@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), [(3, 3, 3), (4, 4, 4), (2, 5, 5)])
def test_phi_is_tight_to_the_best_confusions_for_the_baseline(beta, n_groups, n_labels, seed):
    # every p_g^z >= 0.01 here; Phi loses at most the entry floors, about K * 1e-5
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    assert pred_dist.min() >= 0.01
    problem, reduced = reduced_problem(weights, label_dist, pred_dist, beta)
    baseline = box_baseline(np.random.default_rng(seed), n_labels)
    phi = FairMassLP(reduced).solve(baseline).value
    best = exact_group_value_by_linprog(baseline, weights, label_dist, pred_dist, beta)
    assert best - 1e-9 <= phi <= best + 2 * n_labels * ENTRY_MIN


@pytest.mark.parametrize("beta", [1.0, 0.5])
@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), [(3, 3, 11), (5, 4, 12), (4, 6, 13)])
def test_reduced_descent_never_increases_phi(beta, n_groups, n_labels, seed):
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    problem, reduced = reduced_problem(weights, label_dist, pred_dist, beta)
    start = smooth_rows(random_start(problem, seed)[0])
    descent = descend(reduced, start, 250)
    history = np.array(descent.history)
    assert len(history) >= 2 and np.all(np.diff(history) < 0.0)
    assert descent.converged and descent.iterations < 250
    at_end = FairMassLP(reduced).solve(descent.baseline).value
    assert descent.value == pytest.approx(at_end, abs=1e-9)
    assert np.allclose(descent.baseline.sum(axis=1), 1.0, atol=1e-12)
    assert descent.baseline.min() >= ENTRY_MIN
    assert descent.baseline.max() <= 1.0 - ENTRY_MIN


@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), RAISING_CASES)
def test_reduced_restart_is_monotone_from_the_first_feasible_point(n_groups, n_labels, seed):
    weights, label_dist, pred_dist, alpha = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    known = dcp_from_confusion(alpha, weights, label_dist, random_state=0)
    starts = [random_start(problem, seed), mean_row_start(weights, label_dist, alpha)]
    for start in starts + [(known.baseline, alpha)]:
        trace = solve_restart(problem, start, 250)
        history = np.array(trace.history)
        assert np.all(np.diff(history) < 0.0)
        # the confusion rows are smoothed like p, the baseline only moved into the entry bounds
        first, base = smooth_rows(start[1]), baseline_in_bounds(start[0])
        if constraint_residual(base, first, label_dist, pred_dist) <= 1e-7:
            assert history[0] == pytest.approx(
                objective_by_loops(base, first, weights, label_dist, 1.0)
            )
        at_end = objective_by_loops(trace.baseline, trace.confusions, weights, label_dist, 1.0)
        assert trace.value == history[-1] == pytest.approx(at_end, abs=1e-12)
        residual = constraint_residual(trace.baseline, trace.confusions, label_dist, pred_dist)
        assert residual <= 1e-6


# both methods from the same seed, best of 5 restarts (the methods may stop at different local
# minima, so the allowance is that of the quality check, 0.005); with a never-predicted label
# (seed 3) an earlier form of Phi stalled at 0.65 where the joint method reached 0.02
@pytest.mark.parametrize(
    ("n_groups", "n_labels", "seed", "never_predicted"),
    [(3, 3, 21, False), (5, 3, 22, False), (4, 3, 3, True), (5, 4, 24, True)],
)
def test_reduced_method_is_no_worse_than_the_joint_method(
    n_groups, n_labels, seed, never_predicted
):
    weights, label_dist, _, alpha = random_aggregates(seed, n_groups, n_labels)
    if never_predicted:
        alpha[:, :, 0] = 0.0
        alpha /= alpha.sum(axis=2, keepdims=True)
    pred_dist = np.einsum("gy,gyz->gz", label_dist, alpha)
    reduced = solve(weights, label_dist, pred_dist, n_restarts=5, seed=seed)
    rng = np.random.default_rng(seed)
    reference = joint.solve_joint(weights, label_dist, pred_dist, restarts=5, rng=rng)
    assert reduced.value <= reference.value + 5e-3


@pytest.mark.parametrize(("n_groups", "n_labels", "seed"), [(3, 3, 31), (5, 4, 32)])
def test_second_descent_never_worsens_a_restart(n_groups, n_labels, seed):
    weights, label_dist, pred_dist, _ = random_aggregates(seed, n_groups, n_labels)
    problem = AggregateProblem.build(weights, label_dist, pred_dist, 1.0)
    start, second = draw_starts(problem, 2, np.random.default_rng(seed), None)
    alone = solve_restart(problem, start, 250)
    both = solve_restart(problem, start, 250, second[0])
    assert both.value <= alone.value
    assert both.history[: len(alone.history)] == alone.history
    assert np.all(np.diff(both.history) < 0.0)
    assert both.iterations > alone.iterations  # the second descent ran
    capped = solve_restart(problem, start, alone.iterations, second[0])
    assert capped.iterations == alone.iterations  # max_iter bounds both descents together

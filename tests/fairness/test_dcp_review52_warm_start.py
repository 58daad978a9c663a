"""The aggregate regime's warm start from the known regime keeps its value when the confusion
matrices estimated from records hold zeros (a class a group never predicts, a small group)."""

import numpy as np
import pytest

from trustlab.fairness import multiclass_dcp
from trustlab.fairness._aggregate import AggregateProblem, baseline_in_bounds, solve_restart
from trustlab.fairness._eta import ENTRY_MIN

# 19 records, 5 groups (one of one row), 3 classes; class 1 is predicted once
Y_TRUE = [0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 2, 0, 2, 2, 2, 2, 1, 0, 0]
Y_PRED = [0, 2, 0, 0, 0, 2, 0, 2, 0, 2, 2, 0, 2, 0, 0, 1, 0, 0, 2]
GROUPS = [4, 2, 3, 2, 0, 3, 0, 1, 2, 2, 1, 2, 2, 2, 1, 2, 3, 1, 3]


def test_warm_start_scores_the_known_upper_bound_and_is_not_left_above_it():
    # the baseline was smoothed like p: its entries of about 1e-5 (where the confusion matrices
    # hold zeros) doubled against the confusions' 1.1e-5, the start scored 0.48 instead of the
    # known upper bound 0.18 and the estimate was 0.26
    res = multiclass_dcp(Y_TRUE, Y_PRED, GROUPS, n_restarts=1, random_state=30)
    inputs, known = res.inputs, res.known
    problem = AggregateProblem.build(inputs.group_weights, inputs.label_dist, inputs.pred_dist, 1.0)
    trace = solve_restart(problem, (known.baseline, inputs.alpha), 250)
    assert trace.history[0] == pytest.approx(known.upper, abs=1e-4)
    assert res.aggregate.estimate <= known.upper + 1e-4


def test_warm_starts_from_records_with_zeros_stay_at_most_the_known_upper_bound():
    rng = np.random.default_rng(11)
    for seed in range(12):
        k, n_groups, n = rng.integers(2, 5), rng.integers(2, 5), rng.integers(5, 60)
        y_true = rng.integers(0, k, n)
        y_pred = np.where(rng.random(n) < rng.random(), y_true, rng.integers(0, k, n))
        y_pred = np.where(y_pred == k - 1, 0, y_pred)  # the last class is never predicted
        groups = rng.integers(0, n_groups, n)
        groups[0] = n_groups  # a group of one row
        res = multiclass_dcp(
            y_true, y_pred, groups, labels=list(range(k)), n_restarts=1, random_state=seed
        )
        assert res.aggregate.estimate <= res.known.upper + 1e-4


def test_baseline_in_bounds_moves_only_rows_outside_the_entry_bounds():
    inside = np.array([[0.2, 0.3, 0.5], [ENTRY_MIN, 0.5, 0.5 - ENTRY_MIN]])
    assert np.array_equal(baseline_in_bounds(inside), inside)
    outside = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1e-6, 0.4, 0.599999]])
    moved = baseline_in_bounds(outside)
    assert np.allclose(moved.sum(axis=1), 1.0, atol=1e-15)
    assert moved.min() >= ENTRY_MIN and moved.max() <= 1.0 - ENTRY_MIN
    # mixed with the uniform row only as far as needed: the least entry lands on the bound
    assert np.allclose(moved.min(axis=1), ENTRY_MIN, rtol=1e-9)
    assert np.abs(moved - outside).max() < 3 * ENTRY_MIN

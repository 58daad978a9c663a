"""Multiclass disparate conditional prediction (DCP): how far a classifier is from equalized odds.

DCP (Sabato, Treister & Yom-Tov, ICML 2025) is the smallest fraction of the population whose
conditional prediction probabilities P(Y_hat | Y, A) must differ from a common baseline; it is 0
exactly when multiclass equalized odds holds on the cells with positive mass. Two regimes:

- *known*: the per-group confusion matrices are known (:func:`dcp_from_confusion`); trustlab
  returns a certified bracket [lower, upper] around the DCP;
- *aggregate*: only the group sizes, the label distributions and the prediction distributions are
  known (:func:`dcp_from_aggregates`); trustlab returns a local minimum of the least DCP any
  classifier with these statistics could have.

:func:`dcp_inputs` estimates every input from individual records and :func:`multiclass_dcp` runs
both regimes on them. Each public function validates its inputs once, here; the solvers
(:mod:`._known`, :mod:`._aggregate`) trust them. The result classes live in
:mod:`trustlab.fairness.results`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import (
    check_bool,
    check_in_range,
    check_n_jobs,
    check_positive_int,
    check_random_state,
    check_row_stochastic,
    check_same_length,
)
from trustlab._labels import sorted_unique
from trustlab._renamed import renamed_keyword
from trustlab.errors import InputError
from trustlab.fairness._aggregate import solve_aggregate
from trustlab.fairness._eta import eta
from trustlab.fairness._greedy import random_orders
from trustlab.fairness._inputs import (
    check_common,
    check_init,
    check_labels,
    check_names,
    check_orders,
    check_sample_weight,
    check_sizes,
    check_weighted_groups,
    frozen,
    given_names,
    index_of,
    python_names,
    records,
    rows_sum_to_one,
    union_of_labels,
)
from trustlab.fairness._known import METHODS, solve_known
from trustlab.fairness._label import clip_confusions
from trustlab.fairness.results import (
    AggregateDCPResult,
    DCPInputs,
    DCPResult,
    LabelBounds,
    MulticlassDCPResult,
)

__all__ = [
    "LabelBounds",
    "DCPResult",
    "AggregateDCPResult",
    "DCPInputs",
    "MulticlassDCPResult",
    "dcp_from_confusion",
    "dcp_from_aggregates",
    "dcp_inputs",
    "multiclass_dcp",
]


# --------------------------------------------------------------------------- known regime


def dcp_from_confusion(
    alpha,
    group_weights,
    label_dist,
    *,
    greedy_attempts: int = 10,
    random_state=None,
    permutations=None,
    local_search: bool = True,
    labels: Sequence[Any] | None = None,
    groups: Sequence[Any] | None = None,
) -> DCPResult:
    """Certified bounds on the multiclass DCP from known per-group confusion matrices.

    Solved independently per true label y: the exact lower bound max_z min_a sum_g c_gy
    eta(a, alpha_g^{yz}); upper bounds from the c-weighted mean row, from a greedy assignment
    (``greedy_attempts`` random label orders, best kept) and from a sequential-LP local
    minimisation (HiGHS) started at each, keeping the better of start and result. The greedy+LM
    bound also takes the best of a further search beyond the authors' method: for small
    problems (K = 3 up to about 46 groups, K = 4 up to 8) an exact search over the vertices
    where F_y can have its minimum, which finds the global minimum; otherwise local
    minimisations from the best groups' own rows, while their LPs are small (G K <= 400). Every
    upper bound is the value of a feasible baseline, so ``lower <= DCP <= upper`` always holds.

    Parameters
    ----------
    alpha : array-like of shape (G, K, K)
        alpha[g, y, z] = P(Y_hat = z | Y = y, A = g); every row sums to 1. Entries are clipped to
        [1e-5, 1 - 1e-5] and rows renormalised before solving (as in the authors' code), which
        keeps eta and its slope finite; the bounds are those of the clipped matrices.
    group_weights : array-like of shape (G,)
        w_g = P(A = g), summing to 1 (zeros allowed).
    label_dist : array-like of shape (G, K)
        pi_g^y = P(Y = y | A = g); every row sums to 1.
    greedy_attempts : int, default 10
        Number of random label orders for the greedy upper bound (at most 100000).
    random_state : None, int or numpy Generator
        Seed of the greedy label orders.
    permutations : array-like of shape (T, K, K-1), optional
        Injected greedy orders: ``permutations[t, y]`` lists the label indices other than y in
        the order they are visited. Overrides ``greedy_attempts`` and ``random_state``.
    local_search : bool, default True
        Run the local minimisation and the further search (otherwise mean_lm and greedy_lm
        equal mean and greedy).
    labels, groups : sequence, optional
        Names of the labels and groups (default 0..K-1 and 0..G-1).

    Returns
    -------
    DCPResult

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.fairness import dcp_from_confusion
    >>> alpha = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]])
    >>> res = dcp_from_confusion(alpha, [0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]], random_state=0)
    >>> round(res.lower, 6), round(res.upper, 6)
    (0.0625, 0.0625)
    """
    weights, dist = check_common(group_weights, label_dist)
    alpha = check_row_stochastic(alpha, "alpha")
    n_groups, n_labels = dist.shape
    if alpha.shape != (n_groups, n_labels, n_labels):
        raise InputError.bad(
            "alpha", f"shape ({n_groups}, {n_labels}, {n_labels}) to match label_dist", alpha
        )
    labels = check_names(labels, n_labels, "labels")
    groups = check_names(groups, n_groups, "groups")
    if permutations is not None:
        orders = check_orders(permutations, n_labels)
    else:
        attempts = _check_attempts(greedy_attempts)
        orders = random_orders(check_random_state(random_state), attempts, n_labels)
    local_search = check_bool(local_search, "local_search")
    return _known_regime(alpha, weights, dist, orders, local_search, labels, groups)


#: The most greedy label orders: each is kept in memory (K (K - 1) integers) and solved; 10**12
#: asked numpy for 14.6 TiB at once (a raw MemoryError), where the default is 10.
MAX_GREEDY_ATTEMPTS = 100_000


def _check_attempts(greedy_attempts: Any) -> int:
    attempts = check_positive_int(greedy_attempts, "greedy_attempts")
    if attempts > MAX_GREEDY_ATTEMPTS:
        raise InputError.bad(
            "greedy_attempts", f"an integer in [1, {MAX_GREEDY_ATTEMPTS}]", greedy_attempts
        )
    return attempts


def _known_regime(alpha, weights, dist, orders, local_search, labels, groups) -> DCPResult:
    """The known-regime bounds on validated inputs (rows of ``dist`` summing to 1)."""
    clipped = clip_confusions(alpha)
    solution = solve_known(clipped, weights[:, None] * dist, orders, local_search)
    per_label = tuple(
        LabelBounds(
            label=labels[y],
            mass=float(weights @ dist[:, y]),
            lower=float(solution.lower[y]),
            upper=float(solution.upper[y]),
            method=solution.best_method[y],
            **{m: float(solution.bounds[m][y]) for m in METHODS},
        )
        for y in range(len(labels))
    )
    # eta is evaluated on every cell; cells with pi = 0 are weighted 0
    cell_unfairness = eta(solution.baseline[None, :, :], clipped).max(axis=2)  # (G, K)
    lower, upper = float(solution.lower.sum()), float(solution.upper.sum())
    return DCPResult(
        lower=lower,
        upper=upper,
        ratio=_ratio(upper, lower),
        bounds={m: float(solution.bounds[m].sum()) for m in METHODS},
        per_label=per_label,
        baseline=frozen(solution.baseline),
        unfair_fraction=frozen((dist * cell_unfairness).sum(axis=1)),
        labels=labels,
        groups=groups,
        group_weights=frozen(weights),
    )


def _ratio(upper: float, lower: float) -> float:
    if lower > 0:
        return upper / lower
    return 1.0 if upper <= 0 else float("inf")


# --------------------------------------------------------------------------- aggregate regime


@renamed_keyword("restarts", "n_restarts")
def dcp_from_aggregates(
    group_weights,
    label_dist,
    pred_dist,
    *,
    beta: float = 1.0,
    n_restarts: int = 5,
    random_state=None,
    init=None,
    labels: Sequence[Any] | None = None,
    groups: Sequence[Any] | None = None,
    n_jobs: int | None = None,
) -> AggregateDCPResult:
    """Least DCP consistent with aggregate statistics only (a local minimum, best of restarts).

    Minimises, over a common baseline and over confusion matrices alpha_g consistent with the
    aggregates (sum_y pi_g^y alpha_g^{yz} = p_g^z), the objective
    J = beta * DCP + (1 - beta) * error by sequential LP from ``n_restarts`` starts. The
    problem is non-convex: J* upper-bounds the global minimum, and J* <= the known-regime lower
    bound of a given classifier is not guaranteed.

    Parameters
    ----------
    group_weights : array-like of shape (G,)
        w_g, summing to 1.
    label_dist : array-like of shape (G, K)
        pi_g^y = P(Y = y | A = g).
    pred_dist : array-like of shape (G, K)
        p_g^z = P(Y_hat = z | A = g) (smoothed by 1.1e-5 and renormalised by the solver).
    beta : float in [0, 1], default 1.0
        Weight of the DCP term; 1.0 is pure DCP.
    n_restarts : int, default 5
        Number of starts: ``init`` when given, else the independence start (every group's
        confusion rows equal to its prediction shares, the baseline their label-weighted
        mean), then ``n_restarts - 1`` random ones. (``restarts=``, its old name, still works
        for one release and warns.)
    random_state : None, int or numpy Generator
        Seed of the random starts.
    init : tuple (baseline (K, K), confusions (G, K, K)), optional
        A first start, e.g. the known-regime solution.
    labels, groups : sequence, optional
        Names of the labels and groups.
    n_jobs : int, optional
        Restarts run in parallel through joblib on this many workers (None: 1, -1: every core);
        the result does not depend on it.

    Returns
    -------
    AggregateDCPResult

    Examples
    --------
    >>> from trustlab.fairness import dcp_from_aggregates
    >>> res = dcp_from_aggregates([0.5, 0.5], [[0.5, 0.5], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]],
    ...                           n_restarts=2, random_state=0)
    >>> res.estimate >= 0
    True
    """
    weights, dist = check_common(group_weights, label_dist)
    n_groups, n_labels = dist.shape
    pred = check_row_stochastic(pred_dist, "pred_dist")
    if pred.shape != (n_groups, n_labels):
        raise InputError.bad(
            "pred_dist", f"shape ({n_groups}, {n_labels}) to match label_dist", pred
        )
    beta = check_in_range(beta, "beta", 0.0, 1.0)
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_jobs = check_n_jobs(n_jobs)
    if init is not None:
        init = check_init(init, n_groups, n_labels)
    labels = check_names(labels, n_labels, "labels")
    groups = check_names(groups, n_groups, "groups")
    rng = check_random_state(random_state)
    return _aggregate_regime(
        weights, dist, rows_sum_to_one(pred), beta, n_restarts, rng, init, n_jobs, labels, groups
    )


def _aggregate_regime(
    weights, dist, pred, beta, n_restarts, rng, init, n_jobs, labels, groups
) -> AggregateDCPResult:
    """The aggregate-regime estimate on validated inputs (rows summing to 1)."""
    solution = solve_aggregate(
        weights, dist, pred, rng=rng, beta=beta, n_restarts=n_restarts, init=init, n_jobs=n_jobs
    )
    return AggregateDCPResult(
        estimate=float(solution.value),
        baseline=frozen(solution.baseline),
        confusions=frozen(solution.confusions),
        restart_values=tuple(float(v) for v in solution.restart_values),
        iterations=tuple(int(v) for v in solution.iterations),
        converged=tuple(bool(v) for v in solution.converged),
        beta=beta,
        labels=labels,
        groups=groups,
    )


# --------------------------------------------------------------------------- from records


def dcp_inputs(
    y_true, y_pred, groups, *, labels: Sequence[Any] | None = None, sample_weight=None
) -> DCPInputs:
    """Estimate the DCP inputs (w_g, pi_g^y, alpha_g, p_g^z) from individual records.

    Parameters
    ----------
    y_true, y_pred, groups : array-like of shape (n,)
        True labels, predicted labels and group membership (lists, arrays or pandas Series).
    labels : sequence, optional
        The label set and its order; by default the sorted union of ``y_true`` and ``y_pred``.
        A value outside ``labels`` is an error.
    sample_weight : array-like of shape (n,), optional
        Non-negative record weights (survey weights), positive in at least two groups; every
        share is then weighted and ``DCPInputs.weighted`` says so.

    Returns
    -------
    DCPInputs
        A (group, true label) cell without records has zero mass; its row of alpha is the pooled
        row of that label and it is listed in ``empty_cells``.

    Examples
    --------
    >>> from trustlab.fairness import dcp_inputs
    >>> inp = dcp_inputs([0, 1, 1, 0], [0, 1, 0, 0], ["a", "a", "b", "b"])
    >>> inp.group_weights.tolist(), inp.alpha[1].tolist()
    ([0.5, 0.5], [[1.0, 0.0], [1.0, 0.0]])
    """
    y_true = records(y_true, "y_true")
    y_pred = records(y_pred, "y_pred")
    group_values = records(groups, "groups")
    n = check_same_length(y_true=y_true, y_pred=y_pred, groups=group_values)
    weights = check_sample_weight(sample_weight, n)
    if labels is None:
        label_names = union_of_labels(y_true, y_pred)
    else:
        labels = given_names(labels, "labels")  # read once: a generator would be spent
        label_names = check_labels(y_true, labels, "y_true")
        check_labels(y_pred, labels, "y_pred")
    group_names = sorted_unique(group_values, "groups")
    if labels is None and len(group_names) >= 2 and len(label_names) < 2:
        # the label set is the data's: blame the labels there, not an argument never given
        raise InputError(
            f"y_true: expected at least 2 distinct labels among the true and predicted labels, "
            f"got 1 ({python_names(label_names[:1])[0]!r})",
            argument="y_true",
        )
    check_sizes(len(group_names), len(label_names), "groups", "labels")
    g = index_of(group_values, group_names, "groups")
    y = index_of(y_true, label_names, "y_true")
    z = index_of(y_pred, label_names, "y_pred")
    n_groups, k = len(group_names), len(label_names)
    flat = (g * k + y) * k + z
    counts = np.bincount(flat, weights=weights, minlength=n_groups * k * k).reshape(n_groups, k, k)
    groups_named = python_names(group_names)
    if sample_weight is not None:
        check_weighted_groups(counts.sum(axis=(1, 2)), groups_named)
    labels_named, weighted = python_names(label_names), sample_weight is not None
    return _inputs_from_counts(counts, labels_named, groups_named, n, weighted)


def _inputs_from_counts(
    counts: np.ndarray, labels: tuple, groups: tuple, n_records: int, weighted: bool
) -> DCPInputs:
    k = counts.shape[1]
    group_totals = counts.sum(axis=(1, 2))
    row_totals = counts.sum(axis=2)  # (G, K): weight of (group, true label)
    pooled_rows = _normalise_or(counts.sum(axis=0), np.full(k, 1.0 / k))  # (K, K)
    alpha = np.where(
        row_totals[..., None] > 0,
        counts / np.where(row_totals > 0, row_totals, 1.0)[..., None],
        pooled_rows[None, :, :],
    )
    pooled_labels = _normalise_or(row_totals.sum(axis=0), np.full(k, 1.0 / k))
    pooled_preds = _normalise_or(counts.sum(axis=(0, 1)), np.full(k, 1.0 / k))
    has_weight = group_totals[:, None] > 0
    safe_totals = np.where(group_totals > 0, group_totals, 1.0)[:, None]
    label_dist = np.where(has_weight, row_totals / safe_totals, pooled_labels)
    pred_dist = np.where(has_weight, counts.sum(axis=1) / safe_totals, pooled_preds)
    empty = tuple((groups[gi], labels[yi]) for gi, yi in np.argwhere(row_totals == 0))
    return DCPInputs(
        labels=labels,
        groups=groups,
        group_weights=frozen(group_totals / group_totals.sum()),
        label_dist=frozen(label_dist),
        alpha=frozen(alpha),
        pred_dist=frozen(pred_dist),
        counts=frozen(counts),
        empty_cells=empty,
        n_records=n_records,
        weighted=weighted,
    )


def _normalise_or(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Normalise along the last axis; an all-zero row becomes ``fallback``."""
    totals = counts.sum(axis=-1, keepdims=True)
    return np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), fallback)


@renamed_keyword("restarts", "n_restarts")
def multiclass_dcp(
    y_true,
    y_pred,
    groups,
    *,
    labels: Sequence[Any] | None = None,
    sample_weight=None,
    greedy_attempts: int = 10,
    n_restarts: int = 5,
    random_state=None,
    aggregate: bool = True,
    n_jobs: int | None = None,
) -> MulticlassDCPResult:
    """Audit a classifier for multiclass equalized odds from individual records.

    Estimates the inputs (:func:`dcp_inputs`), bounds the DCP of the classifier
    (:func:`dcp_from_confusion`) and, when ``aggregate`` is True, estimates the least DCP any
    classifier with the same group, label and prediction distributions could have
    (:func:`dcp_from_aggregates`; its first start is the known-regime solution, so the estimate
    is at most about the known upper bound).

    Parameters
    ----------
    y_true, y_pred, groups : array-like of shape (n,)
        True labels, predictions and group membership.
    labels : sequence, optional
        The label set and order (default: sorted union of ``y_true`` and ``y_pred``).
    sample_weight : array-like of shape (n,), optional
        Non-negative record weights (survey weights), positive in at least two groups; every
        share is then weighted and ``DCPInputs.weighted`` says so.
    greedy_attempts : int, default 10
        Random label orders of the greedy upper bound (at most 100000).
    n_restarts : int, default 5
        Starts of the aggregate regime: the known-regime solution, then ``n_restarts - 1``
        random ones. (``restarts=``, its old name, still works for one release and warns.)
    random_state : None, int or numpy Generator
        Seeds both regimes.
    aggregate : bool, default True
        Also run the aggregate regime.
    n_jobs : int, optional
        Parallel restarts of the aggregate regime (None: 1, -1: every core).

    Returns
    -------
    MulticlassDCPResult

    Examples
    --------
    >>> from trustlab.fairness import multiclass_dcp
    >>> y_true = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    >>> y_pred = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0]
    >>> groups = ["a"] * 6 + ["b"] * 6
    >>> res = multiclass_dcp(y_true, y_pred, groups, aggregate=False, random_state=0)
    >>> res.known.lower <= res.known.upper
    True
    """
    attempts = _check_attempts(greedy_attempts)
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    aggregate = check_bool(aggregate, "aggregate")
    n_jobs = check_n_jobs(n_jobs)
    rng = check_random_state(random_state)
    inputs = dcp_inputs(y_true, y_pred, groups, labels=labels, sample_weight=sample_weight)
    weights, dist = inputs.group_weights, rows_sum_to_one(inputs.label_dist)
    orders = random_orders(rng, attempts, len(inputs.labels))
    known = _known_regime(inputs.alpha, weights, dist, orders, True, inputs.labels, inputs.groups)
    aggregate_result = None
    if aggregate:
        aggregate_result = _aggregate_regime(
            weights,
            dist,
            rows_sum_to_one(inputs.pred_dist),
            1.0,
            n_restarts,
            rng,
            (known.baseline, inputs.alpha),
            n_jobs,
            inputs.labels,
            inputs.groups,
        )
    return MulticlassDCPResult(inputs=inputs, known=known, aggregate=aggregate_result)

"""Unknown (aggregate) regime of multiclass DCP: a local minimiser of J, best of restarts.

Only the group weights w_g, the label distributions pi_g^y and the prediction distributions p_g^z
are known. The per-group confusion matrices alpha_g are unknown but tied to the aggregates by
``sum_y pi_g^y alpha_g^{yz} = p_g^z``. We look for the least

    J = beta * sum_{g,y} c_gy max_z eta(alpha^{yz}, alpha_g^{yz})
        + (1 - beta) * sum_{g,y} c_gy (1 - alpha_g^{yy}),        c_gy = w_g pi_g^y,

over a common row-stochastic baseline alpha and feasible alpha_g, every entry in
[ENTRY_MIN, 1 - ENTRY_MIN] and p smoothed by +P_SMOOTHING and renormalised. The problem is
non-convex: this finds a local minimum, whose value upper-bounds the least DCP consistent with the
aggregates. Each restart:

* descends by sequential LP on a reduced form of the problem (:mod:`._reduced`): with rows summing
  to 1, J depends on the confusion matrices only through each cell's fair mass (and, for
  beta < 1, the correct predictions), and which masses the aggregates allow is a linear
  condition, so the confusion matrices drop out;
* then re-solves every group's confusion matrix exactly for the final baseline (:mod:`._group`):
  the returned point is feasible (to FEASIBILITY_TOL) and its value is the true J there;
* is monotone: its first feasible point is its start (confusion rows smoothed like p, baseline
  moved into the entry bounds) when that satisfies the constraints (a warm start from a real
  classifier does), else that baseline with every confusion row equal to the group's prediction
  distribution (always feasible); a descent's point is kept only when its J is lower;
* the first start is the warm start or, without one, :func:`independent_start` (random
  baselines can sit where the linearised step sees no slope: two groups each holding one label
  and predicting the other stopped at 0.5 from every random start, where the least DCP is 0);
* while G * K <= SECOND_DESCENT_WORK and the start is random, also descends from a second random
  baseline and keeps the better point; a warm start gets none, so its result does not depend on
  the seed.

The measurements behind these choices, and the alternatives tried and rejected, are in
docs/fairness-dcp.md. Inputs are trusted: :func:`trustlab.fairness.dcp_from_aggregates`
validates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._results import Result
from trustlab.fairness import _slp
from trustlab.fairness._eta import ENTRY_MIN, eta
from trustlab.fairness._group import FEASIBILITY_TOL, GroupLP
from trustlab.fairness._reduced import ReducedProblem, descend, realise

__all__ = [
    "P_SMOOTHING",
    "AggregateProblem",
    "AggregateSolution",
    "RestartTrace",
    "aggregate_objective",
    "baseline_in_bounds",
    "draw_starts",
    "independent_start",
    "smooth_rows",
    "solve_aggregate",
    "solve_restart",
    "violation",
]

P_SMOOTHING = 1.1e-5  # added to p_g^z before renormalising, so the entry bounds stay feasible
# while G * K is at most this, each random restart also descends from a second random baseline
SECOND_DESCENT_WORK = 200


@dataclass(frozen=True, eq=False)
class AggregateSolution(Result):
    """Best local minimum over the restarts.

    Attributes
    ----------
    value : float
        Best objective J* over the restarts.
    baseline : ndarray of shape (K, K)
        The common baseline alpha at the best point (row-stochastic).
    confusions : ndarray of shape (G, K, K)
        The per-group confusion matrices alpha_g at the best point: rows sum to 1,
        ``sum_y pi_g^y alpha_g^{yz}`` equals the smoothed p_g^z, entries in [1e-5, 1 - 1e-5].
    restart_values, iterations, converged : tuple
        Per restart (the warm start first, when given): the final J, the number of sequential-LP
        iterations and whether the convergence test stopped it before ``max_iter``.
    """

    value: float
    baseline: np.ndarray
    confusions: np.ndarray
    restart_values: tuple[float, ...]
    iterations: tuple[int, ...]
    converged: tuple[bool, ...]

    @classmethod
    def best_of(cls, traces: Sequence[Any]) -> AggregateSolution:
        """The best of the restarts' traces (each with value, baseline, confusions, iterations
        and converged)."""
        best = min(range(len(traces)), key=lambda i: traces[i].value)
        return cls(
            value=traces[best].value,
            baseline=traces[best].baseline,
            confusions=traces[best].confusions,
            restart_values=tuple(trace.value for trace in traces),
            iterations=tuple(trace.iterations for trace in traces),
            converged=tuple(trace.converged for trace in traces),
        )


# --------------------------------------------------------------------------- problem data


def _objective(baseline, confusions, cell_mass, beta) -> float:
    unfair = eta(baseline[None, :, :], confusions).max(axis=2)
    value = beta * float(np.sum(cell_mass * unfair))
    if beta != 1.0:
        correct = np.diagonal(confusions, axis1=1, axis2=2)
        value += (1.0 - beta) * float(np.sum(cell_mass * (1.0 - correct)))
    return value


def aggregate_objective(baseline, confusions, group_weights, label_dist, beta=1.0) -> float:
    """The objective J of the aggregate regime at one point.

    ``J = beta * DCP + (1 - beta) * error`` with
    ``DCP = sum_{g,y} c_gy max_z eta(baseline[y, z], confusions[g, y, z])``,
    ``error = sum_{g,y} c_gy (1 - confusions[g, y, y])`` and
    ``c_gy = group_weights[g] * label_dist[g, y]``.

    Parameters
    ----------
    baseline : array of shape (K, K)
    confusions : array of shape (G, K, K)
    group_weights : array of shape (G,)
    label_dist : array of shape (G, K)
    beta : float, default 1.0

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> same = np.array([[0.8, 0.2], [0.3, 0.7]])
    >>> aggregate_objective(same, np.stack([same, same]), [0.5, 0.5], [[0.5, 0.5], [0.4, 0.6]])
    0.0
    """
    cell_mass = np.asarray(group_weights, dtype=np.float64)[:, None] * np.asarray(
        label_dist, dtype=np.float64
    )
    baseline = np.asarray(baseline, dtype=np.float64)
    return _objective(baseline, np.asarray(confusions, dtype=np.float64), cell_mass, float(beta))


def smooth_rows(rows) -> np.ndarray:
    """Add P_SMOOTHING to every entry and renormalise each row (the last axis)."""
    smoothed = np.asarray(rows, dtype=np.float64) + P_SMOOTHING
    return smoothed / smoothed.sum(axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class AggregateProblem:
    """The data of one aggregate problem, p already smoothed."""

    cell_mass: np.ndarray  # (G, K): c_gy = w_g pi_g^y
    label_dist: np.ndarray  # (G, K)
    pred_dist: np.ndarray  # (G, K), smoothed
    beta: float

    @classmethod
    def build(cls, group_weights, label_dist, pred_dist, beta) -> AggregateProblem:
        labels = np.asarray(label_dist, dtype=np.float64)
        cell_mass = np.asarray(group_weights, dtype=np.float64)[:, None] * labels
        return cls(cell_mass, labels, smooth_rows(pred_dist), float(beta))

    @property
    def n_groups(self) -> int:
        return self.cell_mass.shape[0]

    @property
    def n_labels(self) -> int:
        return self.cell_mass.shape[1]

    def objective(self, baseline, confusions) -> float:
        return _objective(baseline, confusions, self.cell_mass, self.beta)


def violation(problem: AggregateProblem, baseline, confusions) -> float:
    """Largest violation of the row sums, the aggregate constraint and the entry bounds."""
    aggregate = np.einsum("gy,gyz->gz", problem.label_dist, confusions) - problem.pred_dist
    return float(
        max(
            np.max(np.abs(baseline.sum(axis=1) - 1.0)),
            np.max(np.abs(confusions.sum(axis=2) - 1.0)),
            np.max(np.abs(aggregate)),
            ENTRY_MIN - min(baseline.min(), confusions.min()),
            max(baseline.max(), confusions.max()) - (1.0 - ENTRY_MIN),
        )
    )


def draw_starts(problem: AggregateProblem, n_restarts: int, rng: np.random.Generator, init) -> list:
    """The warm start (else the independence start) then random ones, all drawn before any
    restart runs."""
    n_groups, n_labels = problem.n_groups, problem.n_labels
    starts = []
    if init is not None:
        starts.append(tuple(np.asarray(part, dtype=np.float64) for part in init))
    else:
        starts.append(independent_start(problem))
    while len(starts) < n_restarts:
        baseline = rng.random((n_labels, n_labels))
        confusions = rng.random((n_groups, n_labels, n_labels))
        starts.append(
            (
                baseline / baseline.sum(axis=1, keepdims=True),
                confusions / confusions.sum(axis=2, keepdims=True),
            )
        )
    return starts


def independent_start(problem: AggregateProblem) -> tuple[np.ndarray, np.ndarray]:
    """The start where every group predicts independently of the label: each group's confusion
    rows are its prediction distribution p_g (always feasible), and baseline row y is the mean
    of those rows weighted by c_gy (the label's mass in each group; the unweighted mean of p
    for a label without mass).

    Random baselines can sit on a flat region of the reduced problem: where a label's fair mass
    is 0, the linearised step sees no slope in the baseline (two groups each holding one label
    and predicting the other: random starts stop at 0.5, this start is at the least DCP, 0).
    """
    pred = problem.pred_dist
    mass = problem.cell_mass.sum(axis=0)  # (K,)
    weighted = problem.cell_mass.T @ pred  # (K, K): row y = sum_g c_gy p_g
    baseline = np.where(
        mass[:, None] > 0,
        weighted / np.where(mass > 0, mass, 1.0)[:, None],
        pred.mean(axis=0)[None, :],
    )
    confusions = np.broadcast_to(pred[:, None, :], (problem.n_groups, *baseline.shape)).copy()
    return baseline, confusions


def _draw_second_baselines(problem: AggregateProblem, starts: list, rng, init) -> list:
    """One more random baseline (uniform rows, normalised) per random start while G * K is at
    most SECOND_DESCENT_WORK, else None; the first start (warm or independent) gets None, so its
    result does not depend on the seed. Drawn after the starts, which therefore do not change."""
    count = len(starts) - 1  # the first start (warm or independent) is deterministic
    if problem.n_groups * problem.n_labels > SECOND_DESCENT_WORK:
        return [None] * len(starts)
    baselines = rng.random((count, problem.n_labels, problem.n_labels))
    baselines /= baselines.sum(axis=2, keepdims=True)
    return [None, *baselines]


# --------------------------------------------------------------------------- all restarts


def solve_aggregate(
    group_weights,
    label_dist,
    pred_dist,
    *,
    rng: np.random.Generator,
    beta: float = 1.0,
    n_restarts: int = 5,
    init=None,
    max_iter: int = _slp.REDUCED.max_iter,
    n_jobs: int = 1,
) -> AggregateSolution:
    """Local minimum of the aggregate-regime objective J, best of several restarts.

    Parameters
    ----------
    group_weights : array of shape (G,)
        w_g, summing to 1.
    label_dist : array of shape (G, K)
        pi_g^y, rows summing to 1.
    pred_dist : array of shape (G, K)
        p_g^z, rows summing to 1; smoothed by +P_SMOOTHING and renormalised before use.
    rng : numpy Generator
        Draws the starts after the first (uniform random rows, normalised) and, while
        G * K <= SECOND_DESCENT_WORK, one more random baseline per random start; all are drawn
        up front, so the result does not depend on ``n_jobs``.
    beta : float, default 1.0
        Weight of DCP against the error term (1 is pure DCP).
    n_restarts : int, default 5
        Number of starts, the first one included.
    init : tuple (baseline (K, K), confusions (G, K, K)), optional
        Warm start, used as the first start (else :func:`independent_start`).
    max_iter : int, default 250
        LP iterations per restart at most (its descents together).
    n_jobs : int, default 1
        Restarts run in parallel through joblib on this many workers.

    Returns
    -------
    AggregateSolution

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([0.5, 0.5])
    >>> pi = np.array([[0.6, 0.4], [0.3, 0.7]])
    >>> p = np.array([[0.5, 0.5], [0.4, 0.6]])
    >>> solution = solve_aggregate(w, pi, p, n_restarts=2, rng=np.random.default_rng(0))
    >>> solution.confusions.shape
    (2, 2, 2)
    >>> solution.value == min(solution.restart_values)
    True
    """
    problem = AggregateProblem.build(group_weights, label_dist, pred_dist, beta)
    starts = draw_starts(problem, int(n_restarts), rng, init)
    seconds = _draw_second_baselines(problem, starts, rng, init)
    jobs = list(zip(starts, seconds, strict=True))
    if n_jobs == 1:
        traces = [solve_restart(problem, start, max_iter, second) for start, second in jobs]
    else:
        from joblib import Parallel, delayed

        traces = Parallel(n_jobs=n_jobs)(
            delayed(solve_restart)(problem, start, max_iter, second) for start, second in jobs
        )
    return AggregateSolution.best_of(traces)


# --------------------------------------------------------------------------- one restart


@dataclass(frozen=True, eq=False)
class RestartTrace:
    value: float
    baseline: np.ndarray
    confusions: np.ndarray
    iterations: int
    converged: bool
    history: tuple[float, ...]  # J at the feasible start, then after every descent that lowered it


def solve_restart(problem: AggregateProblem, start, max_iter: int, second=None) -> RestartTrace:
    """The reduced sequential LP from the start's baseline (then from ``second``, if given),
    each followed by the exact group step.

    J never increases after the first feasible point: the history holds J there, then J at each
    descent's final point that is lower than the last entry. ``max_iter`` bounds the LP
    iterations of all descents together.
    """
    baseline, confusions = _reduced_start(problem, start)
    history = [problem.objective(baseline, confusions)]
    reduced = ReducedProblem.build(
        problem.cell_mass, problem.label_dist, problem.pred_dist, problem.beta
    )
    iterations, converged = 0, True
    for origin in (baseline,) if second is None else (baseline, smooth_rows(second)):
        if iterations >= max_iter:
            break
        descent = descend(reduced, origin, max_iter - iterations)
        if descent is None:  # the first LP failed: nothing is known from this origin
            converged = False
            continue
        iterations += descent.iterations
        converged = converged and descent.converged
        found = _best_confusions(problem, reduced, descent)
        value = problem.objective(descent.baseline, found)
        if value < history[-1]:
            baseline, confusions = descent.baseline, found
            history.append(value)
    return RestartTrace(history[-1], baseline, confusions, iterations, converged, tuple(history))


def _reduced_start(problem: AggregateProblem, start):
    """The start, its confusion rows smoothed like p and its baseline moved into the entry
    bounds (:func:`baseline_in_bounds`), if that is feasible; else that baseline with every
    confusion row equal to the group's (smoothed) prediction distribution, which satisfies every
    constraint."""
    baseline, confusions = baseline_in_bounds(start[0]), smooth_rows(start[1])
    if violation(problem, baseline, confusions) <= FEASIBILITY_TOL:
        return baseline, confusions
    rows = np.broadcast_to(problem.pred_dist[:, None, :], confusions.shape)
    return baseline, rows.copy()


def baseline_in_bounds(rows) -> np.ndarray:
    """Each row mixed with the uniform row only as far as the entry bounds
    [ENTRY_MIN, 1 - ENTRY_MIN] need (unchanged when it lies inside them).

    The baseline is not smoothed like p: smoothing adds P_SMOOTHING to the smallest entries of
    the baseline and of the confusion rows alike and so doubles a baseline entry of about 1e-5
    against a smoothed confusion entry that was 0. A known-regime warm start sits at such
    entries (a zero of a confusion matrix is clipped to 1e-5, and the baseline follows it):
    smoothed, its cells read eta of about 0.5 and a start scoring the known upper bound 0.18
    scored 0.48 and stopped at 0.26.
    """
    rows = np.asarray(rows, dtype=np.float64)
    uniform = 1.0 / rows.shape[-1]
    low = rows.min(axis=-1, keepdims=True)
    high = rows.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        raise_low = np.where(low < ENTRY_MIN, (ENTRY_MIN - low) / (uniform - low), 0.0)
        lower_high = np.where(
            high > 1.0 - ENTRY_MIN, (high - (1.0 - ENTRY_MIN)) / (high - uniform), 0.0
        )
    share = np.clip(np.maximum(raise_low, lower_high), 0.0, 1.0)
    mixed = (1.0 - share) * rows + share * uniform
    return np.clip(mixed, ENTRY_MIN, 1.0 - ENTRY_MIN)  # round-off of the mixing only


def _best_confusions(problem: AggregateProblem, reduced: ReducedProblem, descent) -> np.ndarray:
    """Per group, the exact group step for the final baseline; where HiGHS fails, the
    confusion matrix the reduced solution realises, or the prediction rows if that is off."""
    baseline = descent.baseline
    realised = realise(reduced, baseline, descent.fair, descent.diagonal)
    confusions = np.empty_like(realised)
    for g in range(problem.n_groups):
        lp = GroupLP(
            problem.cell_mass[g], problem.label_dist[g], problem.pred_dist[g], problem.beta
        )
        exact = lp.solve(baseline)
        if exact is not None:
            confusions[g] = exact
        elif lp.violation(realised[g]) <= FEASIBILITY_TOL:
            confusions[g] = realised[g]
        else:
            confusions[g] = problem.pred_dist[g]
    return confusions

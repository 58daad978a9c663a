"""Known-regime bounds of multiclass DCP (the per-group confusion matrices are known).

The objective separates by true label y (see :mod:`trustlab.fairness._label`). Per label this
module computes the exact lower bound, the mean and greedy upper bounds
(:mod:`trustlab.fairness._greedy`) and local minimisations by sequential linear programming
(:mod:`trustlab.fairness._local`), following Sabato, Treister & Yom-Tov (ICML 2025) and the
authors' reference code, with these deliberate differences:

- the greedy label orders come from an explicit generator, or are injected;
- the line search never accepts an increase of F_y (the authors' takes a tiny step anyway);
- cells with zero mass (c_gy = 0) are left out of every per-label problem;
- ties between candidates (values within TIE_TOL) go to the smallest candidate and each label's
  groups are solved in one canonical order (:func:`~trustlab.fairness._label.label_problems`), so
  the result does not depend on the order of the groups;
- the "greedy+LM" bound searches further than the authors' (see :func:`solve_known`): where it is
  affordable an exact search over the vertices of the piecewise structure of F_y
  (:mod:`trustlab.fairness._vertex`, which finds the global minimum), otherwise local
  minimisations from extra starts.

Every function here assumes validated input, ``alpha`` clipped by
:func:`~trustlab.fairness._label.clip_confusions`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trustlab.fairness._eta import eta_interior
from trustlab.fairness._greedy import greedy_baselines
from trustlab.fairness._label import TIE_TOL, LabelProblem, first_minimum, label_problems
from trustlab.fairness._local import LinearisedLP, LocalResult, local_minimum
from trustlab.fairness._vertex import VERTEX_BUDGET, vertex_minimum

__all__ = ["METHODS", "KnownSolution", "lower_bound", "mean_row", "solve_known"]

METHODS = ("mean", "greedy", "mean_lm", "greedy_lm")
LOCAL_STARTS = 2  # extra local minimisations per label where the vertex search is too large,
LOCAL_START_WORK = 400  # ... fewer where G' x K > LOCAL_START_WORK / 2, none above it


# --------------------------------------------------------------------------- lower bound


def lower_bound(problem: LabelProblem) -> tuple[float, float]:
    """The exact lower bound LB_y = max_z min_a sum_g c_g eta(a, alpha_g^{yz}).

    Each z gives a valid bound because max_z eta(a_z, .) >= eta(a_z, .) for that z. The 1-D
    function of a is concave between consecutive breakpoints alpha_g^{yz} (both eta branches are
    concave), so its minimum over [0, 1] lies on {alpha_g^{yz}} u {0, 1}: O(G^2) per z.

    Returns LB_y and the minimiser of the diagonal (z = y) sub-problem, which fixes the diagonal
    in the greedy upper bound. For K = 2 both columns give the same function and LB_y is exact.
    """
    if problem.mass.size == 0:
        return 0.0, 0.0
    conf = problem.conf
    ends = np.broadcast_to(np.array([[0.0], [1.0]]), (2, conf.shape[1]))
    candidates = np.sort(np.concatenate([conf, ends]), axis=0)  # (G' + 2, K), per column z
    totals = np.einsum(
        "mgz,g->mz", eta_interior(candidates[:, None, :], conf[None, :, :]), problem.mass
    )
    diagonal = candidates[first_minimum(totals[:, problem.label], axis=0), problem.label]
    return float(totals.min(axis=0).max()), float(diagonal)


# --------------------------------------------------------------------------- mean upper bound


def mean_row(problem: LabelProblem) -> np.ndarray:
    """The c-weighted mean row, centred on the first row so identical rows give it exactly."""
    if problem.mass.size == 0:
        return np.full(problem.conf.shape[1], 1.0 / problem.conf.shape[1])
    first = problem.conf[0]
    return first + problem.mass @ (problem.conf - first) / problem.mass.sum()


# --------------------------------------------------------------------------- all labels


@dataclass(frozen=True)
class KnownSolution:
    """Per-label results of the known regime (arrays indexed by true label y)."""

    lower: np.ndarray  # (K,)
    bounds: dict  # method -> (K,) value of F_y
    rows: dict  # method -> (K, K) the baseline rows reaching it
    upper: np.ndarray  # (K,) best of the methods per label
    baseline: np.ndarray  # (K, K) rows achieving ``upper``
    best_method: tuple  # per label, the method that achieved ``upper``
    local_iterations: dict  # "mean_lm"/"greedy_lm" -> (K,) LPs solved
    local_converged: dict  # "mean_lm"/"greedy_lm" -> (K,) whether a stopping rule was met
    exact: np.ndarray  # (K,) bool: the vertex search ran, so ``upper`` is the global minimum


def _distinct_rows(rows: np.ndarray, values: np.ndarray, taken: list, limit: int) -> list:
    """Up to ``limit`` rows in order of value, none within 1e-9 of a row in ``taken``."""
    chosen = []
    for index in np.argsort(values, kind="stable"):
        if len(chosen) == limit:
            break
        row = rows[index]
        if all(np.abs(row - other).max() > 1e-9 for other in taken + chosen):
            chosen.append(row)
    return chosen


def _solve_label(problem, mean, attempts, lower, local_search, local_starts, vertex_budget):
    """Rows and values of the four methods for one label, the kept local results and whether
    the vertex search ran."""
    greedy = attempts[first_minimum(problem.value(attempts))]
    rows = {"mean": mean, "greedy": greedy}
    bounds = {name: float(problem.value(row)) for name, row in rows.items()}
    results, exact = {"mean": None, "greedy": None}, False
    if local_search and problem.mass.size:
        optimal = min(bounds.values()) <= lower + TIE_TOL  # nothing lower exists
        results, exact = _search_label(
            problem, mean, greedy, lower, optimal, local_starts, vertex_budget
        )
    for name, result in results.items():
        better = result is not None and result.value < bounds[name]
        rows[f"{name}_lm"] = result.row if better else rows[name]
        bounds[f"{name}_lm"] = result.value if better else bounds[name]
    return rows, bounds, results, exact


def _search_label(problem, mean, greedy, lower, optimal, local_starts, vertex_budget):
    """The local minimisation from the mean row, and the best of the greedy row's and the
    further search ("greedy" side): the vertex search, or extra local minimisations."""
    exact = None if optimal else vertex_minimum(problem, vertex_budget)
    floor = lower if exact is None else max(lower, exact[1])
    lp = LinearisedLP(problem.conf, problem.mass)
    from_mean = local_minimum(problem, mean, lp, floor)
    if exact is not None:
        return {"mean": from_mean, "greedy": LocalResult(exact[0], exact[1], 0, True)}, True
    found = [
        from_mean if np.array_equal(greedy, mean) else local_minimum(problem, greedy, lp, floor)
    ]
    if local_starts is None:  # extra starts only while their LPs are small
        local_starts = min(LOCAL_STARTS, LOCAL_START_WORK // problem.conf.size)
    # the groups' own rows (at its own row a group is treated fairly), best-valued first
    starts = problem.conf
    for row in _distinct_rows(starts, problem.value(starts), [mean, greedy], local_starts):
        if min(result.value for result in found) <= floor + TIE_TOL:
            break
        found.append(local_minimum(problem, row, lp, floor))
    return {"mean": from_mean, "greedy": min(found, key=lambda result: result.value)}, False


def solve_known(
    alpha: np.ndarray,
    cell_mass: np.ndarray,
    orders: np.ndarray,
    local_search: bool = True,
    local_starts: int | None = None,
    vertex_budget: int = VERTEX_BUDGET,
) -> KnownSolution:
    """All bounds for clipped ``alpha`` (G, K, K), masses c_gy (G, K), greedy orders (T, K, K-1).

    Per label: the lower bound; the mean row; the best of the greedy attempts; "mean_lm", the
    local minimisation from the mean row; "greedy_lm", the best of the local minimisation from the
    greedy row and a further search. The further search is the exact vertex search
    (:func:`~trustlab.fairness._vertex.vertex_minimum`, the global minimum) when its work stays
    within ``vertex_budget``, else local minimisations from ``local_starts`` extra starts, the
    best-valued rows alpha_g^{y.} of the groups (by default 2 while G' K <= 200, 1 while
    G' K <= 400, else none: at K = 10, G = 50 one extra start adds about a quarter to the run
    time). Each "_lm" method keeps the
    better of its start and its result; every local search stops once it meets the lower bound
    (or the vertex minimum), and a label whose mean or greedy value already meets the lower
    bound is not searched. ``local_starts=0, vertex_budget=0`` gives the authors' method.
    """
    k = alpha.shape[1]
    problems = label_problems(alpha, cell_mass)
    lower, diagonals = np.zeros(k), np.zeros(k)
    for problem in problems:
        lower[problem.label], diagonals[problem.label] = lower_bound(problem)
    greedy = greedy_baselines(alpha, cell_mass, diagonals, orders)
    rows = {m: np.zeros((k, k)) for m in METHODS}
    bounds = {m: np.zeros(k) for m in METHODS}
    iterations = {"mean_lm": np.zeros(k, dtype=int), "greedy_lm": np.zeros(k, dtype=int)}
    converged = {"mean_lm": np.ones(k, dtype=bool), "greedy_lm": np.ones(k, dtype=bool)}
    exact = np.zeros(k, dtype=bool)
    for problem in problems:
        y = problem.label
        label_rows, label_bounds, results, exact[y] = _solve_label(
            problem,
            mean_row(problem),
            greedy[y],
            lower[y],
            local_search,
            local_starts,
            vertex_budget,
        )
        for m in METHODS:
            rows[m][y], bounds[m][y] = label_rows[m], label_bounds[m]
        for name, result in results.items():
            if result is not None:
                iterations[f"{name}_lm"][y] = result.iterations
                converged[f"{name}_lm"][y] = result.converged
    table = np.stack([bounds[m] for m in METHODS])  # (4, K)
    best = table.argmin(axis=0)
    upper = table[best, np.arange(k)]
    # Where the bracket closes (K = 2, or a search that meets the lower bound) the two sides are
    # the same number summed in different orders, and upper could come out 1 ulp below lower;
    # upper is F_y at a feasible row, so lowering LB_y to it keeps a valid bound and lower <= upper
    return KnownSolution(
        lower=np.minimum(lower, upper),
        bounds=bounds,
        rows=rows,
        upper=upper,
        baseline=np.stack([rows[METHODS[m]][y] for y, m in enumerate(best)]),
        best_method=tuple(METHODS[m] for m in best),
        local_iterations=iterations,
        local_converged=converged,
        exact=exact,
    )

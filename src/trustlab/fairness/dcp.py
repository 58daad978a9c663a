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
both regimes on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_in_range,
    check_labels,
    check_positive_int,
    check_probability_vector,
    check_random_state,
    check_row_stochastic,
    check_same_length,
)
from trustlab.errors import InputError
from trustlab.fairness import _dcp_known
from trustlab.fairness._eta import eta

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

METHOD_NAMES = {"mean": "mean", "greedy": "greedy", "mean_lm": "mean+LM", "greedy_lm": "greedy+LM"}


# --------------------------------------------------------------------------- result classes


def _plain(value: Any) -> Any:
    """A label or group name as a JSON-safe Python scalar."""
    return value.item() if isinstance(value, np.generic) else value


def _names(names: Sequence[Any]) -> list:
    return [_plain(n) for n in names]


def _ratio(upper: float, lower: float) -> float:
    if lower > 0:
        return upper / lower
    return 1.0 if upper <= 0 else float("inf")


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=np.float64)
    array.setflags(write=False)
    return array


_LABEL_FIELDS = (
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


@dataclass(frozen=True)
class LabelBounds(Mapping):
    """The known-regime bounds of one true label y (also readable as a mapping: ``b["lower"]``).

    ``mass`` is the population fraction with true label y, sum_g w_g pi_g^y; ``lower`` and
    ``upper`` bracket min_a F_y(a); ``mean``, ``greedy``, ``mean_lm`` and ``greedy_lm`` are the
    values of the four upper-bound methods and ``method`` names the one that gave ``upper``.
    ``greedy_lm`` includes trustlab's further search (see :func:`dcp_from_confusion`), so it can
    be lower than the authors' greedy+LM.
    """

    label: Any
    mass: float
    lower: float
    upper: float
    mean: float
    greedy: float
    mean_lm: float
    greedy_lm: float
    method: str

    def __getitem__(self, key: str) -> Any:
        if key not in _LABEL_FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(_LABEL_FIELDS)

    def __len__(self) -> int:
        return len(_LABEL_FIELDS)

    def to_dict(self) -> dict:
        return {key: _plain(self[key]) for key in _LABEL_FIELDS}


@dataclass(frozen=True, eq=False)
class DCPResult:
    """Known-regime DCP: a certified bracket ``lower <= DCP <= upper``.

    Attributes
    ----------
    lower : float
        Exact lower bound, summed over the true labels.
    upper : float
        Per label the best of the mean, greedy, mean+LM and greedy+LM upper bounds, summed; it is
        the DCP of ``baseline``, so it is at most every entry of ``bounds``.
    ratio : float
        ``upper / lower``, a tightness certificate (1.0 when both are 0, inf when only lower is).
    bounds : dict
        Method name ("mean", "greedy", "mean_lm", "greedy_lm") -> that method's bound, summed.
    per_label : tuple of LabelBounds
        The same numbers per true label.
    baseline : ndarray of shape (K, K)
        A common row-stochastic baseline whose DCP is ``upper``.
    unfair_fraction : ndarray of shape (G,)
        Fraction of each group treated unfairly under ``baseline``:
        sum_y pi_g^y max_z eta(baseline[y, z], alpha_g[y, z]); its w-weighted sum is ``upper``.
    labels, groups : tuple
        Names of the labels and groups (default 0..K-1 and 0..G-1).
    group_weights : ndarray of shape (G,)
        The group weights w_g.
    """

    lower: float
    upper: float
    ratio: float
    bounds: dict
    per_label: tuple
    baseline: np.ndarray
    unfair_fraction: np.ndarray
    labels: tuple
    groups: tuple
    group_weights: np.ndarray

    def to_dict(self) -> dict:
        """JSON-safe numbers (``ratio`` is None when infinite)."""
        return {
            "regime": "known",
            "lower": float(self.lower),
            "upper": float(self.upper),
            "ratio": float(self.ratio) if np.isfinite(self.ratio) else None,
            "bounds": {k: float(v) for k, v in self.bounds.items()},
            "per_label": [b.to_dict() for b in self.per_label],
            "baseline": self.baseline.tolist(),
            "unfair_fraction": self.unfair_fraction.tolist(),
            "labels": _names(self.labels),
            "groups": _names(self.groups),
            "group_weights": self.group_weights.tolist(),
        }

    def summary(self) -> str:
        """A few lines: the bracket, the four upper bounds and the most affected group."""
        bounds = ", ".join(f"{METHOD_NAMES[k]} {v:.4f}" for k, v in self.bounds.items())
        worst = int(np.argmax(self.unfair_fraction))
        lines = [
            f"Multiclass DCP, known confusion matrices ({len(self.groups)} groups, "
            f"{len(self.labels)} labels)",
            f"DCP in [{self.lower:.4f}, {self.upper:.4f}]  (lower bound {self.lower:.4f}, "
            f"upper bound {self.upper:.4f}, upper/lower {self.ratio:.3g})",
            f"upper bounds: {bounds}",
            f"most affected group: {_plain(self.groups[worst])!r} "
            f"({100 * self.unfair_fraction[worst]:.2f} % of the group treated unfairly)",
        ]
        return "\n".join(lines)

    def plot(self, ax=None):
        """Bar plot of the unfair fraction per group, with the DCP bracket in the title."""
        ax = _axes(ax)
        ax.bar([str(g) for g in _names(self.groups)], self.unfair_fraction, color="tab:red")
        ax.set_xlabel("group")
        ax.set_ylabel("fraction treated unfairly")
        ax.set_title(f"DCP in [{self.lower:.4f}, {self.upper:.4f}]")
        return ax


@dataclass(frozen=True, eq=False)
class AggregateDCPResult:
    """Aggregate-regime DCP: a local minimum over the confusion matrices consistent with the data.

    ``estimate`` (J*) upper-bounds the least DCP any classifier with these aggregates can have:
    a value clearly above 0 says every such classifier treats about that fraction unfairly. It is
    *not* guaranteed to be below the known-regime lower bound of a particular classifier.

    Attributes
    ----------
    estimate : float
        The best local minimum J* over the restarts.
    baseline : ndarray of shape (K, K)
        The common baseline at the best restart.
    confusions : ndarray of shape (G, K, K)
        Confusion matrices consistent with the aggregates at the best restart.
    restart_values : tuple of float
        J* of every restart.
    iterations, converged : tuple
        Per restart, LP iterations and whether the stopping rule was met.
    beta : float
        Weight of the DCP term (1.0: pure DCP; below 1 the objective adds (1 - beta) x error).
    labels, groups : tuple
        Names of the labels and groups.
    """

    estimate: float
    baseline: np.ndarray
    confusions: np.ndarray
    restart_values: tuple
    iterations: tuple
    converged: tuple
    beta: float
    labels: tuple
    groups: tuple

    def to_dict(self) -> dict:
        return {
            "regime": "aggregate",
            "estimate": float(self.estimate),
            "baseline": self.baseline.tolist(),
            "confusions": self.confusions.tolist(),
            "restart_values": [float(v) for v in self.restart_values],
            "iterations": [int(v) for v in self.iterations],
            "converged": [bool(v) for v in self.converged],
            "beta": float(self.beta),
            "labels": _names(self.labels),
            "groups": _names(self.groups),
        }

    def summary(self) -> str:
        what = "DCP" if self.beta == 1.0 else f"beta-weighted objective (beta = {self.beta:g})"
        return "\n".join(
            [
                f"Multiclass DCP from aggregates ({len(self.groups)} groups, "
                f"{len(self.labels)} labels)",
                f"least {what} consistent with the aggregates (local minimum, best of "
                f"{len(self.restart_values)} restarts): {self.estimate:.4f}",
                "restart values: " + ", ".join(f"{v:.4f}" for v in self.restart_values),
            ]
        )

    def plot(self, ax=None):
        """The value reached by each restart, the best one highlighted."""
        ax = _axes(ax)
        values = np.asarray(self.restart_values, dtype=float)
        colors = ["tab:blue"] * values.size
        if values.size:
            colors[int(np.argmin(values))] = "tab:orange"
        ax.bar(np.arange(1, values.size + 1), values, color=colors)
        ax.set_xlabel("restart")
        ax.set_ylabel("local minimum J*")
        ax.set_title(f"aggregate DCP estimate {self.estimate:.4f}")
        return ax


@dataclass(frozen=True, eq=False)
class DCPInputs:
    """DCP inputs estimated from individual records.

    Attributes
    ----------
    labels, groups : tuple
        Label and group names, in the order of every axis below.
    group_weights : ndarray of shape (G,)
        w_g, the (weighted) share of records in group g.
    label_dist : ndarray of shape (G, K)
        pi_g^y = P(Y = y | A = g).
    alpha : ndarray of shape (G, K, K)
        alpha_g^{yz} = P(Y_hat = z | Y = y, A = g), the row-normalised confusion matrices. A cell
        without records (an entry of ``empty_cells``) gets the pooled row of that label over all
        groups (uniform if the label never occurs); it has zero mass and contributes nothing.
    pred_dist : ndarray of shape (G, K)
        p_g^z = P(Y_hat = z | A = g).
    counts : ndarray of shape (G, K, K)
        (Weighted) counts of (group, true label, predicted label).
    empty_cells : tuple of (group, label)
        Cells with no records.
    """

    labels: tuple
    groups: tuple
    group_weights: np.ndarray
    label_dist: np.ndarray
    alpha: np.ndarray
    pred_dist: np.ndarray
    counts: np.ndarray
    empty_cells: tuple

    def to_dict(self) -> dict:
        return {
            "labels": _names(self.labels),
            "groups": _names(self.groups),
            "group_weights": self.group_weights.tolist(),
            "label_dist": self.label_dist.tolist(),
            "alpha": self.alpha.tolist(),
            "pred_dist": self.pred_dist.tolist(),
            "counts": self.counts.tolist(),
            "empty_cells": [[_plain(g), _plain(y)] for g, y in self.empty_cells],
        }

    def summary(self) -> str:
        lines = [
            f"DCP inputs: {len(self.groups)} groups, {len(self.labels)} labels, "
            f"total weight {self.counts.sum():g}"
        ]
        if self.empty_cells:
            shown = ", ".join(f"({_plain(g)!r}, {_plain(y)!r})" for g, y in self.empty_cells[:8])
            more = "" if len(self.empty_cells) <= 8 else f" and {len(self.empty_cells) - 8} more"
            lines.append(
                f"empty cells (group, true label) with no records, weighted 0: {shown}{more}"
            )
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class MulticlassDCPResult:
    """Both DCP regimes on the same records: ``inputs``, ``known`` and ``aggregate`` (or None)."""

    inputs: DCPInputs
    known: DCPResult
    aggregate: AggregateDCPResult | None

    def to_dict(self) -> dict:
        return {
            "inputs": self.inputs.to_dict(),
            "known": self.known.to_dict(),
            "aggregate": None if self.aggregate is None else self.aggregate.to_dict(),
        }

    def summary(self) -> str:
        parts = [self.known.summary()]
        if self.aggregate is not None:
            parts.append(self.aggregate.summary())
        parts.append(self.inputs.summary())
        return "\n".join(parts)

    def plot(self, ax=None):
        """The known-regime plot, with the aggregate estimate as a dashed line when present."""
        ax = self.known.plot(ax)
        if self.aggregate is not None:
            ax.axhline(
                self.aggregate.estimate,
                color="tab:blue",
                linestyle="--",
                label="aggregate estimate",
            )
            ax.legend()
        return ax


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 3.5))
    return ax


# --------------------------------------------------------------------------- validation


def _check_sizes(n_groups: int, n_labels: int, group_arg: str, label_arg: str) -> None:
    if n_groups < 2:
        raise InputError(
            f"{group_arg}: expected at least 2 groups (DCP compares groups), got {n_groups}",
            argument=group_arg,
        )
    if n_labels < 2:
        raise InputError(
            f"{label_arg}: expected at least 2 labels, got {n_labels}", argument=label_arg
        )


def _check_names(names: Sequence[Any] | None, size: int, name: str) -> tuple:
    if names is None:
        return tuple(range(size))
    names = tuple(_plain(n) for n in (names.tolist() if hasattr(names, "tolist") else names))
    if len(names) != size:
        raise InputError.bad(name, f"{size} names", list(names))
    if len(set(names)) != size:
        raise InputError.bad(name, "distinct names", list(names))
    return names


def _check_common(group_weights, label_dist) -> tuple[np.ndarray, np.ndarray]:
    """w (G,) summing to 1 and pi (G, K) with rows summing to 1, consistent in G."""
    weights = check_probability_vector(group_weights, "group_weights")
    dist = check_row_stochastic(label_dist, "label_dist")
    if dist.ndim != 2 or dist.shape[0] != weights.size:
        raise InputError.bad(
            "label_dist", f"shape ({weights.size}, K) to match group_weights", dist
        )
    _check_sizes(weights.size, dist.shape[1], "group_weights", "label_dist")
    return weights, dist / dist.sum(axis=1, keepdims=True)


def _check_orders(permutations, n_labels: int) -> np.ndarray:
    """Injected greedy orders: shape (T, K, K-1), row [t, y] a permutation of the labels != y."""
    try:
        orders = np.asarray(permutations)
    except (TypeError, ValueError):
        raise InputError.bad("permutations", "an integer array", permutations) from None
    if orders.ndim != 3 or orders.shape[1:] != (n_labels, n_labels - 1) or orders.shape[0] < 1:
        raise InputError.bad(
            "permutations", f"shape (attempts, {n_labels}, {n_labels - 1})", orders
        )
    if orders.dtype.kind not in "iu":
        raise InputError.bad("permutations", "an integer array", orders)
    others = np.array([[z for z in range(n_labels) if z != y] for y in range(n_labels)])
    if not (np.sort(orders, axis=2) == others).all():
        raise InputError(
            "permutations: expected row [t, y] to list every label index except y exactly once",
            argument="permutations",
        )
    return orders.astype(np.intp)


def _random_orders(rng: np.random.Generator, attempts: int, n_labels: int) -> np.ndarray:
    others = np.array([[z for z in range(n_labels) if z != y] for y in range(n_labels)])
    return rng.permuted(np.broadcast_to(others, (attempts,) + others.shape), axis=2)


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
        Number of random label orders for the greedy upper bound.
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
    weights, dist = _check_common(group_weights, label_dist)
    alpha = check_row_stochastic(alpha, "alpha")
    n_groups, n_labels = dist.shape
    if alpha.shape != (n_groups, n_labels, n_labels):
        raise InputError.bad(
            "alpha", f"shape ({n_groups}, {n_labels}, {n_labels}) to match label_dist", alpha
        )
    labels = _check_names(labels, n_labels, "labels")
    groups = _check_names(groups, n_groups, "groups")
    if permutations is not None:
        orders = _check_orders(permutations, n_labels)
    else:
        attempts = check_positive_int(greedy_attempts, "greedy_attempts")
        orders = _random_orders(check_random_state(random_state), attempts, n_labels)
    clipped = _dcp_known.clip_confusions(alpha)
    cell_mass = weights[:, None] * dist
    solution = _dcp_known.solve_known(clipped, cell_mass, orders, bool(local_search))
    return _known_result(solution, clipped, weights, dist, labels, groups)


def _known_result(solution, alpha, weights, dist, labels, groups) -> DCPResult:
    per_label = tuple(
        LabelBounds(
            label=labels[y],
            mass=float(weights @ dist[:, y]),
            lower=float(solution.lower[y]),
            upper=float(solution.upper[y]),
            method=solution.best_method[y],
            **{m: float(solution.bounds[m][y]) for m in _dcp_known.METHODS},
        )
        for y in range(len(labels))
    )
    # eta is evaluated on every cell; cells with pi = 0 are weighted 0
    cell_unfairness = eta(solution.baseline[None, :, :], alpha).max(axis=2)  # (G, K)
    lower, upper = float(solution.lower.sum()), float(solution.upper.sum())
    return DCPResult(
        lower=lower,
        upper=upper,
        ratio=_ratio(upper, lower),
        bounds={m: float(solution.bounds[m].sum()) for m in _dcp_known.METHODS},
        per_label=per_label,
        baseline=_frozen(solution.baseline),
        unfair_fraction=_frozen((dist * cell_unfairness).sum(axis=1)),
        labels=labels,
        groups=groups,
        group_weights=_frozen(weights),
    )


# --------------------------------------------------------------------------- aggregate regime


def dcp_from_aggregates(
    group_weights,
    label_dist,
    pred_dist,
    *,
    beta: float = 1.0,
    restarts: int = 5,
    random_state=None,
    init=None,
    labels: Sequence[Any] | None = None,
    groups: Sequence[Any] | None = None,
    n_jobs: int | None = None,
) -> AggregateDCPResult:
    """Least DCP consistent with aggregate statistics only (a local minimum, best of restarts).

    Minimises, over a common baseline and over confusion matrices alpha_g consistent with the
    aggregates (sum_y pi_g^y alpha_g^{yz} = p_g^z), the objective
    J = beta * DCP + (1 - beta) * error by sequential LP from ``restarts`` random starts. The
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
    restarts : int, default 5
        Number of starts, ``init`` included when given (the others are random).
    random_state : None, int or numpy Generator
        Seed of the random starts.
    init : tuple (baseline (K, K), confusions (G, K, K)), optional
        A first start, e.g. the known-regime solution.
    labels, groups : sequence, optional
        Names of the labels and groups.
    n_jobs : int, optional
        Restarts run in parallel through joblib.

    Returns
    -------
    AggregateDCPResult

    Examples
    --------
    >>> from trustlab.fairness import dcp_from_aggregates
    >>> res = dcp_from_aggregates([0.5, 0.5], [[0.5, 0.5], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]],
    ...                           restarts=2, random_state=0)
    >>> res.estimate >= 0
    True
    """
    weights, dist = _check_common(group_weights, label_dist)
    n_groups, n_labels = dist.shape
    pred = check_row_stochastic(pred_dist, "pred_dist")
    if pred.shape != (n_groups, n_labels):
        raise InputError.bad(
            "pred_dist", f"shape ({n_groups}, {n_labels}) to match label_dist", pred
        )
    beta = check_in_range(beta, "beta", 0.0, 1.0)
    restarts = check_positive_int(restarts, "restarts")
    if n_jobs is not None:
        n_jobs = _check_n_jobs(n_jobs)
    if init is not None:
        init = _check_init(init, n_groups, n_labels)
    labels = _check_names(labels, n_labels, "labels")
    groups = _check_names(groups, n_groups, "groups")
    from trustlab.fairness._dcp_aggregate import solve_aggregate

    solution = solve_aggregate(
        weights,
        dist,
        pred / pred.sum(axis=1, keepdims=True),
        beta=beta,
        restarts=restarts,
        random_state=check_random_state(random_state),
        init=init,
        n_jobs=n_jobs,
    )
    return AggregateDCPResult(
        estimate=float(solution.value),
        baseline=_frozen(solution.baseline),
        confusions=_frozen(solution.confusions),
        restart_values=tuple(float(v) for v in solution.restart_values),
        iterations=tuple(int(v) for v in solution.iterations),
        converged=tuple(bool(v) for v in solution.converged),
        beta=beta,
        labels=labels,
        groups=groups,
    )


def _check_n_jobs(n_jobs) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InputError.bad("n_jobs", "None or a non-zero integer (-1: all cores)", n_jobs)
    return int(n_jobs)


def _check_init(init, n_groups: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(init, (tuple, list)) or len(init) != 2:
        raise InputError.bad("init", "a pair (baseline (K, K), confusions (G, K, K))", init)
    baseline = check_row_stochastic(init[0], "init[0]")
    confusions = check_row_stochastic(init[1], "init[1]")
    if baseline.shape != (n_labels, n_labels):
        raise InputError.bad("init[0]", f"shape ({n_labels}, {n_labels})", baseline)
    if confusions.shape != (n_groups, n_labels, n_labels):
        raise InputError.bad("init[1]", f"shape ({n_groups}, {n_labels}, {n_labels})", confusions)
    return baseline, confusions


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
        Non-negative record weights.

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
    y_true = as_1d(y_true, "y_true")
    y_pred = as_1d(y_pred, "y_pred")
    group_values = as_1d(groups, "groups")
    n = check_same_length(y_true=y_true, y_pred=y_pred, groups=group_values)
    weights = _check_sample_weight(sample_weight, n)
    if labels is None:
        label_names = _unique(np.concatenate([y_true, y_pred]), "y_true")
    else:
        label_names = check_labels(y_true, labels, "y_true")
        check_labels(y_pred, labels, "y_pred")
    group_names = _unique(group_values, "groups")
    _check_sizes(len(group_names), len(label_names), "groups", "labels")
    g = _index_of(group_values, group_names, "groups")
    y = _index_of(y_true, label_names, "y_true")
    z = _index_of(y_pred, label_names, "y_pred")
    n_groups, k = len(group_names), len(label_names)
    flat = (g * k + y) * k + z
    counts = np.bincount(flat, weights=weights, minlength=n_groups * k * k).reshape(n_groups, k, k)
    return _inputs_from_counts(counts, tuple(_names(label_names)), tuple(_names(group_names)))


def _check_sample_weight(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    weights = as_float_array(sample_weight, "sample_weight", ndim=1)
    if weights.size != n:
        raise InputError.bad("sample_weight", f"{n} weights, one per record", weights)
    if (weights < 0).any():
        raise InputError.bad("sample_weight", "non-negative weights", weights)
    if weights.sum() <= 0:
        raise InputError.bad("sample_weight", "a positive total weight", weights)
    return weights


def _unique(values: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.unique(values)
    except TypeError:
        raise InputError.bad(name, "values of one comparable type", values) from None


def _index_of(values: np.ndarray, names: np.ndarray, name: str) -> np.ndarray:
    """Position of every value in ``names`` (which need not be sorted)."""
    names = np.asarray(names)
    try:
        order = np.argsort(names, kind="stable")
        where = np.searchsorted(names, values, sorter=order)
    except TypeError:
        raise InputError.bad(name, "values of the same type as the labels", values) from None
    index = order[np.minimum(where, names.size - 1)]
    if not (names[index] == values).all():  # e.g. numbers among string labels
        raise InputError.bad(name, f"values among {names.tolist()!r}", values)
    return index


def _inputs_from_counts(counts: np.ndarray, labels: tuple, groups: tuple) -> DCPInputs:
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
        group_weights=_frozen(group_totals / group_totals.sum()),
        label_dist=_frozen(label_dist),
        alpha=_frozen(alpha),
        pred_dist=_frozen(pred_dist),
        counts=_frozen(counts),
        empty_cells=empty,
    )


def _normalise_or(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Normalise along the last axis; an all-zero row becomes ``fallback``."""
    totals = counts.sum(axis=-1, keepdims=True)
    return np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), fallback)


def multiclass_dcp(
    y_true,
    y_pred,
    groups,
    *,
    labels: Sequence[Any] | None = None,
    sample_weight=None,
    greedy_attempts: int = 10,
    restarts: int = 5,
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
        Non-negative record weights.
    greedy_attempts : int, default 10
        Random label orders of the greedy upper bound.
    restarts : int, default 5
        Random starts of the aggregate regime.
    random_state : None, int or numpy Generator
        Seeds both regimes.
    aggregate : bool, default True
        Also run the aggregate regime.
    n_jobs : int, optional
        Parallel restarts of the aggregate regime.

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
    inputs = dcp_inputs(y_true, y_pred, groups, labels=labels, sample_weight=sample_weight)
    rng = check_random_state(random_state)
    known = dcp_from_confusion(
        inputs.alpha,
        inputs.group_weights,
        inputs.label_dist,
        greedy_attempts=greedy_attempts,
        random_state=rng,
        labels=inputs.labels,
        groups=inputs.groups,
    )
    aggregate_result = None
    if aggregate:
        aggregate_result = dcp_from_aggregates(
            inputs.group_weights,
            inputs.label_dist,
            inputs.pred_dist,
            restarts=restarts,
            random_state=rng,
            init=(known.baseline, inputs.alpha),
            labels=inputs.labels,
            groups=inputs.groups,
            n_jobs=n_jobs,
        )
    return MulticlassDCPResult(inputs=inputs, known=known, aggregate=aggregate_result)

"""The results of multiclass DCP: the known-regime bracket, the aggregate estimate, the inputs.

Every class here is a frozen :class:`~trustlab._results.Result`: ``to_dict()`` is JSON-safe (the
CLI's ``--json`` and ``result.json``), ``summary()`` a few lines of text and ``plot(ax=None)``
draws the result where a picture helps. Arrays are read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from trustlab._results import Result, new_axes

__all__ = ["LabelBounds", "DCPResult", "AggregateDCPResult", "DCPInputs", "MulticlassDCPResult"]

METHOD_NAMES = {"mean": "mean", "greedy": "greedy", "mean_lm": "mean+LM", "greedy_lm": "greedy+LM"}
_PLOT_SIZE = (6.0, 3.5)  # a new figure's size when plot() gets no axes


@dataclass(frozen=True)
class LabelBounds(Result, Mapping):
    """The known-regime bounds of one true label y (also readable as a mapping: ``b["lower"]``).

    ``mass`` is the population fraction with true label y, sum_g w_g pi_g^y; ``lower`` and
    ``upper`` bracket min_a F_y(a); ``mean``, ``greedy``, ``mean_lm`` and ``greedy_lm`` are the
    values of the four upper-bound methods and ``method`` names the one that gave ``upper``.
    ``greedy_lm`` includes trustlab's further search (see
    :func:`~trustlab.fairness.dcp_from_confusion`), so it can be lower than the authors'
    greedy+LM.
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

    _FIELDS: ClassVar[tuple[str, ...]] = (
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

    def __getitem__(self, key: str) -> Any:
        if key not in self._FIELDS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._FIELDS)

    def __len__(self) -> int:
        return len(self._FIELDS)

    def summary(self) -> str:
        return (
            f"label {self.label!r} (mass {self.mass:.4f}): DCP part in [{self.lower:.4f}, "
            f"{self.upper:.4f}] ({METHOD_NAMES[self.method]})"
        )


@dataclass(frozen=True, eq=False)
class DCPResult(Result):
    """Known-regime DCP: a certified bracket ``lower <= DCP <= upper``.

    Attributes
    ----------
    lower : float
        Exact lower bound, summed over the true labels.
    upper : float
        Per label the best of the mean, greedy, mean+LM and greedy+LM upper bounds, summed; it is
        the DCP of ``baseline``, so it is at most every entry of ``bounds``.
    ratio : float
        ``upper / lower``, a tightness certificate (1.0 when both are 0, inf when only lower is;
        None in ``to_dict()`` when infinite).
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

    figure_name: ClassVar[str] = "dcp.png"
    figure_size: ClassVar[tuple[float, float]] = (7.0, 4.0)

    def _dict_items(self) -> dict[str, Any]:
        return {"regime": "known", **super()._dict_items()}

    def summary(self) -> str:
        """A few lines: the bracket, the four upper bounds and the most affected group."""
        bounds = ", ".join(f"{METHOD_NAMES[k]} {v:.4f}" for k, v in self.bounds.items())
        # a group of weight 0 counts for nothing in the DCP: it is not "the most affected"
        weighted = np.where(self.group_weights > 0, self.unfair_fraction, -np.inf)
        worst = int(np.argmax(weighted))
        if weighted[worst] > 1e-12:  # above rounding noise
            most = (
                f"most affected group: {self.groups[worst]!r} "
                f"({100 * self.unfair_fraction[worst]:.2f} % of the group treated unfairly; "
                f"the group is {100 * self.group_weights[worst]:.2f} % of the population)"
            )
        else:
            most = "most affected group: none (no group is treated unfairly)"
        lines = [
            f"Multiclass DCP, known confusion matrices ({len(self.groups)} groups, "
            f"{len(self.labels)} labels)",
            f"DCP in [{self.lower:.4f}, {self.upper:.4f}]  (lower bound {self.lower:.4f}, "
            f"upper bound {self.upper:.4f}, upper/lower {self.ratio:.3g})",
            f"upper bounds: {bounds}",
            most,
        ]
        return "\n".join(lines)

    def plot(self, ax=None):
        """Bar plot of the unfair fraction per group, with the DCP bracket in the title."""
        ax = new_axes(ax, figsize=_PLOT_SIZE)
        ax.bar([str(g) for g in self.groups], self.unfair_fraction, color="tab:red")
        ax.set_xlabel("group")
        ax.set_ylabel("fraction treated unfairly")
        ax.set_title(f"DCP in [{self.lower:.4f}, {self.upper:.4f}]")
        return ax


@dataclass(frozen=True, eq=False)
class AggregateDCPResult(Result):
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

    figure_name: ClassVar[str] = "dcp_aggregate.png"
    figure_size: ClassVar[tuple[float, float]] = (7.0, 4.0)

    def _dict_items(self) -> dict[str, Any]:
        return {"regime": "aggregate", **super()._dict_items()}

    def summary(self) -> str:
        what = "DCP" if self.beta == 1.0 else f"beta-weighted objective (beta = {self.beta:g})"
        return "\n".join(
            [
                f"Multiclass DCP from aggregates ({len(self.groups)} groups, "
                f"{len(self.labels)} labels)",
                f"least {what} consistent with the aggregates (local minimum, best of "
                f"{len(self.restart_values)} restart{'s' * (len(self.restart_values) != 1)}): "
                f"{self.estimate:.4f}",
                "restart values: " + ", ".join(f"{v:.4f}" for v in self.restart_values),
            ]
        )

    def plot(self, ax=None):
        """The value reached by each restart, the best one highlighted."""
        ax = new_axes(ax, figsize=_PLOT_SIZE)
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
class DCPInputs(Result):
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
        Cells with no records (or, with ``sample_weight``, only records of weight 0).
    n_records : int or None
        The number of records (None when the inputs were not built from records).
    weighted : bool
        True when ``sample_weight`` was given: every share, count and bound is then weighted.
    """

    labels: tuple
    groups: tuple
    group_weights: np.ndarray
    label_dist: np.ndarray
    alpha: np.ndarray
    pred_dist: np.ndarray
    counts: np.ndarray
    empty_cells: tuple
    n_records: int | None = None
    weighted: bool = False

    def weighting(self) -> str:
        """What the shares count: the records, or the records weighted by sample_weight."""
        total = f"{self.counts.sum():g}"
        if self.weighted:
            of = "" if self.n_records is None else f" over {self.n_records} records"
            return f"records weighted by sample_weight (total weight {total}{of})"
        return f"{total} records, unweighted" if self.n_records is not None else f"total {total}"

    def summary(self) -> str:
        lines = [
            f"DCP inputs: {len(self.groups)} groups, {len(self.labels)} labels, {self.weighting()}"
        ]
        if self.empty_cells:
            shown = ", ".join(f"({g!r}, {y!r})" for g, y in self.empty_cells[:8])
            more = "" if len(self.empty_cells) <= 8 else f" and {len(self.empty_cells) - 8} more"
            what = "no records or only records of weight 0" if self.weighted else "no records"
            lines.append(f"empty cells (group, true label) with {what}, weighted 0: {shown}{more}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class MulticlassDCPResult(Result):
    """Both DCP regimes on the same records: ``inputs``, ``known`` and ``aggregate`` (or None)."""

    inputs: DCPInputs
    known: DCPResult
    aggregate: AggregateDCPResult | None

    figure_name: ClassVar[str] = "dcp.png"
    figure_size: ClassVar[tuple[float, float]] = (7.0, 4.0)

    def summary(self) -> str:
        parts = [self.known.summary()]
        if self.inputs.weighted:  # say so before any number: every one of them is weighted
            what = self.inputs.weighting()
            parts.insert(0, f"{what[0].upper()}{what[1:]}: every share and bound below is weighted")
        if self.aggregate is not None:
            parts.append(self.aggregate.summary())
        parts.append(self.inputs.summary())
        return "\n".join(parts)

    def plot(self, ax=None):
        """The known-regime plot, with the aggregate estimate as a dashed line when present (the
        title says when the records are weighted)."""
        ax = self.known.plot(ax)
        if self.inputs.weighted:
            ax.set_title(f"{ax.get_title()}, records weighted by sample_weight")
        if self.aggregate is not None:
            ax.axhline(
                self.aggregate.estimate,
                color="tab:blue",
                linestyle="--",
                label="aggregate estimate",
            )
            ax.legend()
        return ax

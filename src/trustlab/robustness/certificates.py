"""Cost-sensitive certificates of randomized smoothing (Xin et al., ICML 2025), from counts.

A smoothed classifier ``g(x) = argmax_k P[f(x + delta) = k]``, ``delta ~ N(0, sigma^2 I)``,
cannot change its prediction within Cohen's radius. When only some mistakes are harmful (a cost
matrix ``C``: ``C[y, j] > 0`` means reading a true ``y`` as ``j`` is harmful), a larger radius
can be certified: the one within which ``g`` cannot move into the harmful set
``Omega_y = {j != y : C[y, j] > 0}``, by comparing the top class only with the harmful classes.
It even certifies points where Cohen must abstain (top-class probability under 1/2).

Certificates from counts (see :mod:`~trustlab.robustness.bounds`), all at confidence
``1 - alpha``:

- ``radius_std``: Cohen's ``sigma * Phi^-1(lower(c_A, n, alpha))``, 0 when abstaining.
- ``radius_cs``: the spec's group radius ``(sigma/2) (Phi^-1(p_A_low) - Phi^-1(max_j p_j_up))``
  with ``p_A_low`` at ``alpha / 2`` and every ``p_j_up`` at ``alpha / (2 |Omega|)``.
- ``radius``: the combined certificate. Its bounds are those of ``radius_cs`` with each
  ``p_j_up`` capped at ``1 - p_A_low`` (true whenever the bound on ``p_A`` is), which makes it
  ``max(radius_cs, sigma * Phi^-1(p_A_low))``: the best of the standard and the cost-sensitive
  certificate, both at the split budget, so it holds with probability ``1 - alpha`` overall.
- ``pair_radii[j]``: per harmful target, the radius within which ``g`` cannot become ``j``;
  all hold together with ``radius``. For real-valued costs they bound the worst cost an
  attack of a given size can cause.

When the top class is itself harmful there is no cost-sensitive certificate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_float_array,
    check_class_indices,
    check_in_range,
    check_positive_int,
    check_probability,
)
from trustlab._renamed import renamed_keyword
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.robustness import bounds
from trustlab.robustness._sampling import check_radii, check_sigma

__all__ = [
    "ABSTAIN",
    "Certificate",
    "DatasetCertificate",
    "certify_counts",
    "check_cost_matrix",
    "make_cost_matrix",
]

ABSTAIN = -1


# -- Inputs: cost matrices, alpha, class indices, counts ---------------------------------------


@renamed_keyword("num_classes", "n_classes")
def check_cost_matrix(cost_matrix: Any, n_classes: int) -> np.ndarray:
    """A validated ``(K, K)`` cost matrix; None means every mistake is harmful (``1 - I``).

    Row ``y`` is the true class, column ``j`` the predicted class; entries are non-negative and
    the diagonal is 0 (a correct prediction costs nothing).

    Examples
    --------
    >>> check_cost_matrix(None, 2).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    if cost_matrix is None:
        return 1.0 - np.eye(n_classes)
    costs = as_float_array(cost_matrix, "cost_matrix", ndim=2)
    if costs.shape != (n_classes, n_classes):
        raise InputError.bad(
            "cost_matrix",
            f"a ({n_classes}, {n_classes}) matrix (one row and one column per class)",
            costs,
        )
    negative = np.argwhere(costs < 0)
    if len(negative):
        _refuse_entry(costs, negative[0], "non-negative costs")
    diagonal = np.flatnonzero(np.diag(costs) != 0)
    if len(diagonal):
        i = int(diagonal[0])
        _refuse_entry(costs, (i, i), "0 on the diagonal (a correct prediction costs nothing)")
    return costs


def _refuse_entry(costs: np.ndarray, where: Any, expected: str) -> None:
    i, j = (int(v) for v in where)
    message = f"cost_matrix: expected {expected}, got {costs[i, j]:g} at index ({i}, {j})"
    raise InputError(message, argument="cost_matrix")


@renamed_keyword("num_classes", "n_classes")
def make_cost_matrix(
    n_classes: int, harmful: Mapping[int, Iterable[int]] | Iterable[tuple[int, int]]
) -> np.ndarray:
    """A binary cost matrix from the harmful (true class, predicted class) pairs.

    Parameters
    ----------
    n_classes : int
    harmful : mapping of seed class to its harmful targets, or iterable of (seed, target)

    Examples
    --------
    >>> make_cost_matrix(4, {3: [1]})[3].tolist()
    [0.0, 1.0, 0.0, 0.0]
    >>> int(make_cost_matrix(10, [(3, 8), (3, 5)]).sum())
    2
    """
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    if isinstance(harmful, Mapping):
        wanted = "a list of targets, e.g. {3: [8]}"
        pairs = [
            (s, t) for s, ts in harmful.items() for t in _listed(ts, f"harmful[{s!r}]", wanted)
        ]
    else:
        pairs = _listed(harmful, "harmful", "a mapping {seed: [targets]} or (seed, target) pairs")
    costs = np.zeros((n_classes, n_classes))
    for pair in pairs:
        pair = _listed(pair, "harmful", "(seed, target) pairs, e.g. [(3, 8)]")
        if len(pair) != 2:
            raise InputError.bad("harmful", "(seed, target) pairs, e.g. [(3, 8)]", pair)
        seed, target = check_class_indices(pair, "harmful", n_classes).tolist()
        if seed == target:
            raise InputError.bad("harmful", "pairs of two different classes", pair)
        costs[seed, target] = 1.0
    return costs


def _listed(value: Any, name: str, expected: str) -> list:
    """``value`` as a list, or an InputError when it is not a collection (a bare number)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InputError.bad(name, expected, value)
    return list(value)


def check_alpha(alpha: Any) -> float:
    """A failure probability in (0, 0.5]."""
    return check_in_range(alpha, "alpha", 0.0, 0.5, low_open=True)


def check_class_array(values: Any, name: str, n_classes: int, size: int) -> np.ndarray:
    """``size`` class indices in ``[0, n_classes)`` as an int64 array."""
    arr = check_class_indices(values, name, n_classes)
    if len(arr) != size:
        raise InputError.bad(name, f"{size} class indices", arr)
    return arr


def _check_counts(counts: Any) -> np.ndarray:
    arr = as_float_array(counts, "counts", ndim=2)
    if arr.shape[1] < 2:
        raise InputError.bad("counts", "at least 2 classes (columns)", arr)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise InputError.bad("counts", "non-negative integer counts", arr)
    totals = arr.sum(axis=1)  # beyond 2**53 counts are inexact and p_A's bound rounds to 1 (inf)
    for total in totals[(totals == 0) | (totals > 2.0**53)][:1]:
        raise InputError.bad("counts", "rows of 1 to 2**53 samples", total)
    return arr.astype(np.int64)


@dataclass(frozen=True)
class Certificate(Result):
    """The certificates of one point (see the module docstring for each radius).

    Attributes
    ----------
    label : int
        The point's true class ``y`` (the seed class whose harmful set is certified against).
    top_class : int
        ``A``, the class most frequent among the ``n0`` selection samples.
    prediction : int
        Cohen's certified prediction: ``top_class``, or ``ABSTAIN`` (-1) when the lower bound on
        ``p_A`` at level alpha is at most 1/2.
    counts : tuple of int
        Label counts among the ``n`` estimation samples.
    harmful : tuple of int
        ``Omega_y``, the harmful targets of ``label``.
    radius_std, radius_cs, radius : float
        The standard, group and combined radii; 0.0 when nothing is certified, ``inf`` when
        ``label`` has no harmful target.
    pair_radii : dict of int to float
        For each harmful target, the radius within which ``g`` cannot predict it (0: not excluded).
    p_lower_std, p_lower : float
        Lower bounds on ``p_A`` at levels alpha and alpha/2.
    p_upper : dict of int to float
        Upper bounds on ``p_j`` for the harmful targets, each at level ``alpha / (2 |Omega|)``.
    costs : tuple of float
        Row ``label`` of the cost matrix.
    """

    label: int
    top_class: int
    prediction: int
    counts: tuple[int, ...]
    n0: int
    n: int
    sigma: float
    alpha: float
    harmful: tuple[int, ...]
    radius_std: float
    radius_cs: float
    radius: float
    pair_radii: dict[int, float]
    p_lower_std: float
    p_lower: float
    p_upper: dict[int, float]
    costs: tuple[float, ...]

    @property
    def abstain(self) -> bool:
        """Cohen's test failed: no standard certificate (a cost-sensitive one may exist)."""
        return self.prediction == ABSTAIN

    @property
    def top_is_harmful(self) -> bool:
        return self.top_class in self.harmful

    @property
    def cs_certified(self) -> bool:
        """A cost-sensitive certificate exists: the top class is safe and the radius positive."""
        return self.radius > 0

    def cs_robust_at(self, epsilon: float) -> bool:
        """No l2 perturbation of norm below ``epsilon`` can move ``g`` into a harmful class."""
        return self.radius >= check_in_range(epsilon, "epsilon", 0, np.inf) and self.cs_certified

    def std_robust_at(self, epsilon: float) -> bool:
        """Cohen: ``g`` predicts ``top_class`` everywhere within ``epsilon``."""
        return self.radius_std >= check_in_range(epsilon, "epsilon", 0, np.inf) and not self.abstain

    def worst_cost_at(self, epsilon: float) -> float:
        """The largest cost an attack of norm below ``epsilon`` may cause (certified bound)."""
        epsilon = check_in_range(epsilon, "epsilon", 0, np.inf)  # NaN was read as exposed
        exposed = [self.costs[j] for j, r in self.pair_radii.items() if not (0 < r >= epsilon)]
        return float(max(exposed, default=0.0))

    # The JSON of a certificate, in this order, then its harmful targets.
    _json_keys = tuple(
        "label top_class prediction abstain counts n0 n sigma alpha harmful top_is_harmful "
        "cs_certified radius_std radius_cs radius p_lower_std p_lower".split()
    )

    def _dict_items(self) -> dict[str, Any]:
        # An infinite radius (no harmful target) becomes None in JSON.
        items = {key: getattr(self, key) for key in self._json_keys}
        items["targets"] = [self._target(j) for j in self.harmful]
        return items

    def _target(self, j: int) -> dict[str, Any]:
        radius = self.pair_radii[j]
        return {"target": j, "cost": self.costs[j], "p_upper": self.p_upper[j], "radius": radius}

    def summary(self) -> str:
        if not self.harmful:
            cs = "no harmful target: every prediction is acceptable"
        elif self.top_is_harmful:
            cs = f"top class {self.top_class} is itself harmful: not cost-sensitively robust"
        elif not self.cs_certified:
            cs = "no cost-sensitive certificate (harmful classes too likely)"
        else:
            cs = f"cannot become any of {list(self.harmful)} within radius {self.radius:.4f}"
        std = f"predicts {self.top_class} within radius {self.radius_std:.4f}"
        std = "abstains (lower bound on p_A <= 1/2)" if self.abstain else std
        return (
            f"label {self.label}, top class {self.top_class} "
            f"(n = {self.n}, sigma = {self.sigma:g}, alpha = {self.alpha:g})\n"
            f"  standard (Cohen): {std}\n"
            f"  cost-sensitive: {cs}"
        )


@dataclass(frozen=True, eq=False)
class DatasetCertificate(Result):
    """Certificates of many points, and certified accuracy against radius.

    Saved (``write_outputs``, the CLI's ``--out``) as ``result.json``, the certified-accuracy
    curves as ``certified_accuracy.png`` and one row per point in ``certificates.csv``.

    Attributes
    ----------
    indices : (m,) int array
        Positions of the points in the certified data.
    labels, top_classes : (m,) int arrays
    counts : (m, K) int array
        Estimation counts (each row sums to ``n``).
    cost_matrix : (K, K) array
    sigma, alpha : float
    n0, n : int
    raw : dict of arrays
        Unclipped certificate arrays from the counts (``radius``, ``radius_cs``,
        ``radius_std``, ``pair_radii``, bounds); see :func:`bounds.certify_arrays`.
    """

    indices: np.ndarray
    labels: np.ndarray
    top_classes: np.ndarray
    counts: np.ndarray
    cost_matrix: np.ndarray
    sigma: float
    alpha: float
    n0: int
    n: int
    raw: dict[str, np.ndarray] = internal_field()

    figure_name = "certified_accuracy.png"

    @classmethod
    def from_counts(
        cls,
        top_classes: Any,
        counts: Any,
        labels: Any,
        *,
        sigma: float,
        alpha: float,
        cost_matrix: Any = None,
        n0: int = 0,
        indices: Any = None,
    ) -> DatasetCertificate:
        """Certify many points from their top classes and estimation counts (no sampling).

        Examples
        --------
        >>> result = DatasetCertificate.from_counts([0, 1], [[990, 10], [30, 970]], [0, 1],
        ...                                         sigma=0.5, alpha=0.001)
        >>> result.certified_accuracy(0.5, "std").tolist()
        [1.0]
        """
        counts = _check_counts(counts)
        num_points, n_classes = counts.shape
        labels = check_class_array(labels, "labels", n_classes, num_points)
        top_classes = check_class_array(top_classes, "top_classes", n_classes, num_points)
        sigma = check_sigma(sigma)
        alpha = check_alpha(alpha)
        costs = check_cost_matrix(cost_matrix, n_classes)
        if num_points and np.any(counts.sum(axis=1) != counts[0].sum()):
            raise InputError.bad("counts", "rows with the same total n", counts.sum(axis=1))
        n0 = check_positive_int(n0, "n0", minimum=0)
        if indices is not None:
            given = np.asarray(indices)
            if given.shape != (num_points,) or given.dtype.kind not in "iu":
                raise InputError.bad("indices", f"one integer per point ({num_points})", indices)
        return cls._from_valid_counts(top_classes, counts, labels, sigma, alpha, costs, n0, indices)

    @classmethod
    def _from_valid_counts(
        cls, top_classes, counts, labels, sigma, alpha, costs, n0, indices=None
    ) -> DatasetCertificate:
        """:meth:`from_counts` for inputs already checked (the samplers' own results)."""
        num_points = len(counts)
        n = int(counts[0].sum()) if num_points else 0
        harmful = costs[labels] > 0
        raw = bounds.certify_arrays(top_classes, counts, harmful, sigma, alpha)
        indices = np.arange(num_points) if indices is None else np.asarray(indices, dtype=int)
        return cls(indices, labels, top_classes, counts, costs, sigma, alpha, n0, n, raw)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def radius(self) -> np.ndarray:
        """Combined cost-sensitive radius per point: 0 where not certified, inf if no target."""
        return np.maximum(self.raw["radius"], 0.0)

    @property
    def radius_std(self) -> np.ndarray:
        return self.raw["radius_std"]

    @property
    def radius_cs(self) -> np.ndarray:
        return np.maximum(self.raw["radius_cs"], 0.0)

    @property
    def cs_certified(self) -> np.ndarray:
        return self.raw["radius"] > 0

    @property
    def abstain(self) -> np.ndarray:
        return self.raw["abstain"]

    @property
    def seed_points(self) -> np.ndarray:
        """Points whose label has at least one harmful target (where Rob_cs is measured)."""
        return self.raw["n_harmful"] > 0

    @property
    def accuracy(self) -> float:
        """Share of points whose Monte-Carlo top class is the label (clean smoothed accuracy)."""
        return float(np.mean(self.top_classes == self.labels)) if len(self) else float("nan")

    def certificate(self, position: int) -> Certificate:
        """The :class:`Certificate` of the point at ``position`` (0-based, in this result)."""
        m, i = len(self), position
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -m <= i < m:
            raise InputError.bad("position", f"an integer in [-{m}, {m})", position)  # -1: last
        raw = self.raw
        harmful = tuple(int(j) for j in np.flatnonzero(self.cost_matrix[self.labels[i]] > 0))
        return Certificate(
            label=int(self.labels[i]),
            top_class=int(self.top_classes[i]),
            prediction=ABSTAIN if raw["abstain"][i] else int(self.top_classes[i]),
            counts=tuple(int(c) for c in self.counts[i]),
            n0=self.n0,
            n=self.n,
            sigma=self.sigma,
            alpha=self.alpha,
            harmful=harmful,
            radius_std=float(raw["radius_std"][i]),
            radius_cs=float(max(raw["radius_cs"][i], 0.0)),
            radius=float(max(raw["radius"][i], 0.0)),
            pair_radii={j: float(max(raw["pair_radii"][i, j], 0.0)) for j in harmful},
            p_lower_std=float(raw["p_lower_std"][i]),
            p_lower=float(raw["p_lower"][i]),
            p_upper={j: float(raw["p_upper"][i, j]) for j in harmful},
            costs=tuple(float(c) for c in self.cost_matrix[self.labels[i]]),
        )

    def certified_accuracy(
        self, radii: Any = 0.0, kind: str = "cs", *, confidence: float | None = None
    ) -> np.ndarray:
        """Certified accuracy at each radius.

        Parameters
        ----------
        radii : float or array-like
        kind : {"cs", "std"}
            "cs": Rob_cs, the share of seed-class points (a label with harmful targets) whose
            top class is not harmful and whose combined radius is at least the radius. "std":
            Cohen's certified accuracy, the share of all points predicted correctly without
            abstaining with ``radius_std`` at least the radius.
        confidence : float, optional
            Return a lower bound that holds with this probability instead of the approximate
            (expected) value: subtract alpha and a Bernstein term (Cohen et al., 2019).
        """
        eps = check_radii(radii)
        if kind == "cs":
            mask = self.seed_points
            hits = self.cs_certified[mask, None] & (self.radius[mask, None] >= eps[None, :])
        elif kind == "std":
            mask = np.ones(len(self), dtype=bool)
            correct = (self.top_classes == self.labels) & ~self.abstain
            hits = correct[:, None] & (self.radius_std[:, None] >= eps[None, :])
        else:
            raise InputError.bad("kind", "'cs' or 'std'", kind)
        count = int(mask.sum())
        if count == 0:
            return np.full(len(eps), np.nan)
        accuracy = hits.mean(axis=0)
        if confidence is not None:
            confidence = check_probability(confidence, "confidence")
            deficit = bounds.accuracy_deficit(self.alpha, count, confidence)
            accuracy = np.maximum(accuracy - deficit, 0.0)
        return accuracy

    def worst_cost(self, radii: Any = 0.0) -> np.ndarray:
        """Rob_cost: the mean over points of the largest cost an attack below each radius may
        cause, certified (a harmful target counts unless its pair radius covers the radius)."""
        eps = check_radii(radii)
        excluded = np.nan_to_num(self.raw["pair_radii"], nan=-np.inf)  # NaN: outside Omega
        row_costs = self.cost_matrix[self.labels]
        harmful = row_costs > 0
        out = np.empty(len(eps))
        for k, e in enumerate(eps):
            exposed = harmful & ~((excluded > 0) & (excluded >= e))
            out[k] = bounds.mean_cost(np.where(exposed, row_costs, 0.0).max(axis=1), len(self))
        return out

    def radius_grid(self, num: int = 21) -> np.ndarray:
        """Radii from 0 to the largest finite certified radius (at least sigma), evenly spaced."""
        num = check_positive_int(num, "num")
        finite = np.concatenate(
            [self.radius[np.isfinite(self.radius)], self.radius_std[np.isfinite(self.radius_std)]]
        )
        top = max(float(finite.max()) if finite.size else 0.0, self.sigma)
        return np.linspace(0.0, top, num)

    def _dict_items(self) -> dict[str, Any]:
        """Settings, the curves on :meth:`radius_grid` and every point's certificate."""
        grid = self.radius_grid()
        return {
            "sigma": self.sigma,
            "alpha": self.alpha,
            "n0": self.n0,
            "n": self.n,
            "num_points": len(self),
            "num_seed_points": int(self.seed_points.sum()),
            "accuracy": self.accuracy,
            "cost_matrix": self.cost_matrix,
            "curves": {
                "radius": grid,
                "certified_accuracy_std": self.certified_accuracy(grid, "std"),
                "certified_accuracy_cs": self.certified_accuracy(grid, "cs"),
                "worst_cost": self.worst_cost(grid),
            },
            "points": [
                {"index": int(self.indices[i]), **self.certificate(i).to_dict()}
                for i in range(len(self))
            ],
        }

    def files(self) -> dict[str, Any]:
        """``certificates.csv``: one row per point (its certificate without the lists); an
        infinite radius (no harmful target, None in JSON) is written ``inf``, not left blank."""
        import pandas as pd

        drop = ("counts", "targets", "harmful")
        rows = [{k: v for k, v in p.items() if k not in drop} for p in self.to_dict()["points"]]
        infinite = {"radius_cs": np.inf, "radius": np.inf}
        return {"certificates.csv": pd.DataFrame(rows).fillna(infinite)}

    def summary(self, radii: Any = None) -> str:
        """Accuracy, then Rob_std, Rob_cs and Rob_cost at a few radii, as a small table."""
        grid = np.linspace(0.0, 2.0 * self.sigma, 5) if radii is None else np.atleast_1d(radii)
        std, cs = self.certified_accuracy(grid, "std"), self.certified_accuracy(grid, "cs")
        cost = self.worst_cost(grid)
        small = np.abs(grid[grid != 0])  # radii to two significant digits
        places = max(3, 1 - int(np.floor(np.log10(small.min())))) if small.size else 3
        lines = [
            f"Randomized smoothing certificates of {len(self)} points "
            f"(sigma = {self.sigma:g}, n0 = {self.n0}, n = {self.n}, alpha = {self.alpha:g}); "
            f"{int(self.seed_points.sum())} have a harmful target",
            f"clean smoothed accuracy {self.accuracy:.3f}; cost-sensitive certificates where "
            f"Cohen abstains: {int((self.cs_certified & self.abstain & self.seed_points).sum())}",
            f"{'radius':>{places + 5}} {'Rob_std':>8} {'Rob_cs':>8} {'Rob_cost':>9}",
        ]
        for e, a, b, c in zip(grid, std, cs, cost, strict=True):
            b = "n/a" if np.isnan(b) else f"{b:.3f}"  # Rob_cs without seed points
            lines.append(f"{e:{places + 5}.{places}f} {a:8.3f} {b:>8} {c:9.3f}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Certified accuracy against radius, standard (Cohen) and cost-sensitive (Rob_cs)."""
        ax = new_axes(ax, figsize=(6.0, 4.0))
        grid = self.radius_grid(101)
        ax.plot(grid, self.certified_accuracy(grid, "std"), label="standard (Cohen), all points")
        ax.plot(grid, self.certified_accuracy(grid, "cs"), label="cost-sensitive, seed points")
        ax.set_xlabel("l2 radius")
        ax.set_ylabel("certified accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Randomized smoothing, sigma = {self.sigma:g}")
        ax.legend(loc="upper right")
        return ax


# -- Certification from counts -----------------------------------------------------------------


def certify_counts(
    counts: Any,
    top_class: int,
    label: int,
    *,
    sigma: float,
    alpha: float,
    cost_matrix: Any = None,
    n0: int = 0,
) -> Certificate:
    """Certificates of one point from its estimation counts (the counts-level API).

    Parameters
    ----------
    counts : (K,) array-like of int
        How often the base classifier predicted each class among ``n`` noisy samples.
    top_class : int
        The class chosen on separate selection samples (the same samples must not be used for
        both the choice and ``counts``, or the bounds are invalid).
    label : int
        The seed class whose harmful targets ``Omega`` are certified against.
    sigma, alpha : float
        Noise level and failure probability.
    cost_matrix : (K, K) array-like, optional
        Default: every mistake harmful (then ``radius`` is the pairwise Cohen radius).
    n0 : int
        The number of selection samples, recorded in the result.

    Examples
    --------
    >>> costs = make_cost_matrix(4, {1: [3]})
    >>> cert = certify_counts([100, 6000, 3900, 0], 1, 1, sigma=0.5, alpha=0.001,
    ...                       cost_matrix=costs)
    >>> cert.abstain, round(cert.radius, 3) > 0
    (False, True)
    """
    rows = _check_counts(np.atleast_2d(counts) if np.ndim(counts) == 1 else counts)
    if rows.shape[0] != 1:
        raise InputError.bad("counts", "one row of class counts", rows)
    top = check_class_array([top_class], "top_class", rows.shape[1], 1)
    y = check_class_array([label], "label", rows.shape[1], 1)
    options = dict(sigma=sigma, alpha=alpha, cost_matrix=cost_matrix, n0=n0)
    return DatasetCertificate.from_counts(top, rows, y, **options).certificate(0)

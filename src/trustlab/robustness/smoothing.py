"""Cost-sensitive certified robustness by randomized smoothing (Xin et al., ICML 2025).

A smoothed classifier ``g(x) = argmax_k P[f(x + delta) = k]``, ``delta ~ N(0, sigma^2 I)``,
cannot change its prediction within Cohen's radius. When only some mistakes are harmful (a cost
matrix ``C``: ``C[y, j] > 0`` means reading a true ``y`` as ``j`` is harmful), a larger radius
can be certified: the one within which ``g`` cannot move into the harmful set
``Omega_y = {j != y : C[y, j] > 0}``, by comparing the top class only with the harmful classes.
It even certifies points where Cohen must abstain (top-class probability under 1/2).

Certificates from counts (see ``_stats``), all at confidence ``1 - alpha``:

- ``radius_std``: Cohen's ``sigma * Phi^-1(lower(c_A, n, alpha))``, 0 when abstaining.
- ``radius_cs``: the spec's group radius ``(sigma/2) (Phi^-1(p_A_low) - Phi^-1(max_j p_j_up))``
  with ``p_A_low`` at ``alpha / 2`` and every ``p_j_up`` at ``alpha / (2 |Omega|)``.
- ``radius``: the combined certificate. Its bounds are those of ``radius_cs`` with each
  ``p_j_up`` capped at ``1 - p_A_low`` (true whenever the bound on ``p_A`` is), which makes it
  ``max(radius_cs, sigma * Phi^-1(p_A_low))``: the best of the standard and the cost-sensitive
  certificate, both at the split budget, so it holds with probability ``1 - alpha`` overall
  (returning ``max`` of Cohen's radius at ``alpha`` and the group radius at ``alpha`` would only
  hold with probability ``1 - 2 alpha``).
- ``pair_radii[j]``: per harmful target, the radius within which ``g`` cannot become ``j``;
  all hold together with ``radius``. For real-valued costs they bound the worst cost an
  attack of a given size can cause.

When the top class is itself harmful there is no cost-sensitive certificate.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_in_range,
    check_positive_int,
    check_random_state,
)
from trustlab.errors import ConfigError, InputError
from trustlab.robustness import _stats
from trustlab.robustness._progress import progress_reporter
from trustlab.robustness._sampling import (
    LabelFunction,
    count_labels,
    eval_mode,
    is_torch_module,
    point_streams,
)
from trustlab.robustness._store import CheckpointStore

__all__ = [
    "ABSTAIN",
    "Certificate",
    "DatasetCertificate",
    "SmoothedClassifier",
    "certify_counts",
    "certify_dataset",
    "check_cost_matrix",
    "make_cost_matrix",
]

ABSTAIN = -1
# Samples per joblib task and per checkpoint line batch: a few seconds of a small model's work.
_SAMPLES_PER_CHUNK = 200_000
_MAX_POINTS_PER_CHUNK = 64


# ---------------------------------------------------------------------------------------------
# Cost matrices


def check_cost_matrix(cost_matrix: Any, num_classes: int) -> np.ndarray:
    """A validated ``(K, K)`` cost matrix; None means every mistake is harmful (``1 - I``).

    Row ``y`` is the true class, column ``j`` the predicted class; entries are non-negative and
    the diagonal is 0 (a correct prediction costs nothing).
    """
    if cost_matrix is None:
        return 1.0 - np.eye(num_classes)
    costs = as_float_array(cost_matrix, "cost_matrix", ndim=2)
    if costs.shape != (num_classes, num_classes):
        raise InputError.bad(
            "cost_matrix",
            f"a ({num_classes}, {num_classes}) matrix (one row and one column per class)",
            costs,
        )
    negative = np.argwhere(costs < 0)
    if len(negative):
        i, j = (int(v) for v in negative[0])
        raise InputError.bad(f"cost_matrix[{i}, {j}]", "a non-negative cost", float(costs[i, j]))
    diagonal = np.flatnonzero(np.diag(costs) != 0)
    if len(diagonal):
        i = int(diagonal[0])
        raise InputError.bad(
            f"cost_matrix[{i}, {i}]",
            "0 on the diagonal (a correct prediction costs nothing)",
            float(costs[i, i]),
        )
    return costs


def make_cost_matrix(
    num_classes: int, harmful: Mapping[int, Iterable[int]] | Iterable[tuple[int, int]]
) -> np.ndarray:
    """A binary cost matrix from the harmful (true class, predicted class) pairs.

    Parameters
    ----------
    num_classes : int
    harmful : mapping of seed class to its harmful targets, or iterable of (seed, target)

    Examples
    --------
    >>> make_cost_matrix(4, {3: [1]})[3].tolist()
    [0.0, 1.0, 0.0, 0.0]
    >>> int(make_cost_matrix(10, [(3, 8), (3, 5)]).sum())
    2
    """
    num_classes = check_positive_int(num_classes, "num_classes", minimum=2)
    pairs = (
        [(seed, target) for seed, targets in harmful.items() for target in targets]
        if isinstance(harmful, Mapping)
        else list(harmful)
    )
    costs = np.zeros((num_classes, num_classes))
    for pair in pairs:
        if len(pair) != 2:
            raise InputError.bad("harmful", "(seed, target) pairs", pair)
        seed, target = (_class_index(v, "harmful", num_classes) for v in pair)
        if seed == target:
            raise InputError.bad("harmful", "pairs of two different classes", pair)
        costs[seed, target] = 1.0
    return costs


def _class_index(value: Any, name: str, num_classes: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError.bad(name, f"class indices in [0, {num_classes})", value)
    if not 0 <= value < num_classes:
        raise InputError.bad(name, f"class indices in [0, {num_classes})", int(value))
    return int(value)


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Certificate:
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
        For each harmful target, the radius within which ``g`` cannot predict it (0.0: not
        excluded).
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
        return self.cs_certified and self.radius >= epsilon

    def std_robust_at(self, epsilon: float) -> bool:
        """Cohen: ``g`` predicts ``top_class`` everywhere within ``epsilon``."""
        return not self.abstain and self.radius_std >= epsilon

    def worst_cost_at(self, epsilon: float) -> float:
        """The largest cost an attack of norm below ``epsilon`` may cause (certified bound)."""
        exposed = [
            self.costs[j] for j, r in self.pair_radii.items() if not (r > 0 and r >= epsilon)
        ]
        return float(max(exposed, default=0.0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe; an infinite radius (no harmful target) becomes None."""
        return {
            "label": self.label,
            "top_class": self.top_class,
            "prediction": self.prediction,
            "abstain": self.abstain,
            "counts": list(self.counts),
            "n0": self.n0,
            "n": self.n,
            "sigma": self.sigma,
            "alpha": self.alpha,
            "harmful": list(self.harmful),
            "top_is_harmful": self.top_is_harmful,
            "cs_certified": self.cs_certified,
            "radius_std": _finite(self.radius_std),
            "radius_cs": _finite(self.radius_cs),
            "radius": _finite(self.radius),
            "p_lower_std": self.p_lower_std,
            "p_lower": self.p_lower,
            "targets": [
                {
                    "target": j,
                    "cost": self.costs[j],
                    "p_upper": self.p_upper[j],
                    "radius": self.pair_radii[j],
                }
                for j in self.harmful
            ],
        }

    def summary(self) -> str:
        if not self.harmful:
            cs = "no harmful target: every prediction is acceptable"
        elif self.top_is_harmful:
            cs = f"top class {self.top_class} is itself harmful: not cost-sensitively robust"
        elif not self.cs_certified:
            cs = "no cost-sensitive certificate (harmful classes too likely)"
        else:
            cs = f"cannot become any of {list(self.harmful)} within radius {self.radius:.4f}"
        std = (
            "abstains (lower bound on p_A <= 1/2)"
            if self.abstain
            else f"predicts {self.top_class} within radius {self.radius_std:.4f}"
        )
        return (
            f"label {self.label}, top class {self.top_class} "
            f"(n = {self.n}, sigma = {self.sigma:g}, alpha = {self.alpha:g})\n"
            f"  standard (Cohen): {std}\n"
            f"  cost-sensitive: {cs}"
        )


@dataclass(frozen=True, eq=False)
class DatasetCertificate:
    """Certificates of many points, and certified accuracy against radius.

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
        ``radius_std``, ``pair_radii``, bounds); see ``_stats.certify_arrays``.
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
    raw: dict[str, np.ndarray] = field(repr=False)

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
        """Certify many points from their top classes and estimation counts (no sampling)."""
        counts = _check_counts(counts)
        num_points, num_classes = counts.shape
        labels = _check_class_array(labels, "labels", num_classes, num_points)
        top_classes = _check_class_array(top_classes, "top_classes", num_classes, num_points)
        sigma = _check_sigma(sigma)
        alpha = _check_alpha(alpha)
        costs = check_cost_matrix(cost_matrix, num_classes)
        n = int(counts[0].sum()) if num_points else 0
        if num_points and np.any(counts.sum(axis=1) != n):
            raise InputError.bad("counts", "rows with the same total n", counts.sum(axis=1))
        harmful = costs[labels] > 0
        raw = _stats.certify_arrays(top_classes, counts, harmful, sigma, alpha)
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
        raw, i = self.raw, position
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
        eps = np.atleast_1d(as_float_array(radii, "radii"))
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
            confidence = check_in_range(
                confidence, "confidence", 0, 1, low_open=True, high_open=True
            )
            deficit = _stats.accuracy_deficit(self.alpha, count, confidence)
            accuracy = np.maximum(accuracy - deficit, 0.0)
        return accuracy

    def worst_cost(self, radii: Any = 0.0) -> np.ndarray:
        """Rob_cost: the mean over points of the largest cost an attack below each radius may
        cause, certified (a harmful target counts unless its pair radius covers the radius)."""
        eps = np.atleast_1d(as_float_array(radii, "radii"))
        pair = self.raw["pair_radii"]  # NaN outside Omega, -inf when the top class is harmful
        row_costs = self.cost_matrix[self.labels]
        harmful = row_costs > 0
        out = np.empty(len(eps))
        for k, e in enumerate(eps):
            excluded = np.nan_to_num(pair, nan=-np.inf)
            exposed = harmful & ~((excluded > 0) & (excluded >= e))
            out[k] = np.where(exposed, row_costs, 0.0).max(axis=1).mean() if len(self) else np.nan
        return out

    def radius_grid(self, num: int = 21) -> np.ndarray:
        """Radii from 0 to the largest finite certified radius (at least sigma), evenly spaced."""
        finite = np.concatenate(
            [self.radius[np.isfinite(self.radius)], self.radius_std[np.isfinite(self.radius_std)]]
        )
        top = max(float(finite.max()) if finite.size else 0.0, self.sigma)
        return np.linspace(0.0, top, num)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: settings, the curves on :meth:`radius_grid` and every point's certificate."""
        grid = self.radius_grid()
        return {
            "sigma": self.sigma,
            "alpha": self.alpha,
            "n0": self.n0,
            "n": self.n,
            "num_points": len(self),
            "num_seed_points": int(self.seed_points.sum()),
            "accuracy": _finite(self.accuracy),
            "cost_matrix": self.cost_matrix.tolist(),
            "curves": {
                "radius": grid.tolist(),
                "certified_accuracy_std": _finite_list(self.certified_accuracy(grid, "std")),
                "certified_accuracy_cs": _finite_list(self.certified_accuracy(grid, "cs")),
                "worst_cost": _finite_list(self.worst_cost(grid)),
            },
            "points": [
                {"index": int(self.indices[i]), **self.certificate(i).to_dict()}
                for i in range(len(self))
            ],
        }

    def summary(self, radii: Any = None) -> str:
        """Accuracy, then Rob_std, Rob_cs and Rob_cost at a few radii, as a small table."""
        grid = np.linspace(0.0, 2.0 * self.sigma, 5) if radii is None else np.atleast_1d(radii)
        std = self.certified_accuracy(grid, "std")
        cs = self.certified_accuracy(grid, "cs")
        cost = self.worst_cost(grid)
        lines = [
            f"Randomized smoothing certificates of {len(self)} points "
            f"(sigma = {self.sigma:g}, n0 = {self.n0}, n = {self.n}, alpha = {self.alpha:g}); "
            f"{int(self.seed_points.sum())} have a harmful target",
            f"clean smoothed accuracy {self.accuracy:.3f}; cost-sensitive certificates where "
            f"Cohen abstains: {int((self.cs_certified & self.abstain & self.seed_points).sum())}",
            f"{'radius':>8} {'Rob_std':>8} {'Rob_cs':>8} {'Rob_cost':>9}",
        ]
        for e, a, b, c in zip(grid, std, cs, cost, strict=True):
            lines.append(f"{e:8.3f} {a:8.3f} {b:8.3f} {c:9.3f}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Certified accuracy against radius, standard (Cohen) and cost-sensitive (Rob_cs)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.0, 4.0))
        grid = self.radius_grid(101)
        ax.plot(grid, self.certified_accuracy(grid, "std"), label="standard (Cohen), all points")
        ax.plot(grid, self.certified_accuracy(grid, "cs"), label="cost-sensitive, seed points")
        ax.set_xlabel("l2 radius")
        ax.set_ylabel("certified accuracy")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Randomized smoothing, sigma = {self.sigma:g}")
        ax.legend(loc="upper right")
        return ax


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _finite_list(values: np.ndarray) -> list[float | None]:
    return [_finite(v) for v in values]


# ---------------------------------------------------------------------------------------------
# Certification from counts


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
    counts = _check_counts(np.atleast_2d(counts) if np.ndim(counts) == 1 else counts)
    if counts.shape[0] != 1:
        raise InputError.bad("counts", "one row of class counts", counts)
    result = DatasetCertificate.from_counts(
        [top_class], counts, [label], sigma=sigma, alpha=alpha, cost_matrix=cost_matrix, n0=n0
    )
    return result.certificate(0)


def _check_counts(counts: Any) -> np.ndarray:
    arr = as_float_array(counts, "counts", ndim=2)
    if arr.shape[1] < 2:
        raise InputError.bad("counts", "at least 2 classes (columns)", arr)
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise InputError.bad("counts", "non-negative integer counts", arr)
    if np.any(arr.sum(axis=1) == 0):
        raise InputError.bad("counts", "rows with at least one sample", arr)
    return arr.astype(np.int64)


def _check_class_array(values: Any, name: str, num_classes: int, size: int) -> np.ndarray:
    arr = as_1d(values, name)
    if len(arr) != size:
        raise InputError.bad(name, f"{size} class indices", arr)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= num_classes:
        raise InputError.bad(name, f"integer class indices in [0, {num_classes})", arr)
    return arr.astype(np.intp)


def _check_sigma(sigma: Any) -> float:
    return check_in_range(sigma, "sigma", 0.0, math.inf, low_open=True, high_open=True)


def _check_alpha(alpha: Any) -> float:
    return check_in_range(alpha, "alpha", 0.0, 0.5, low_open=True)


# ---------------------------------------------------------------------------------------------
# The smoothed classifier


class SmoothedClassifier:
    """A base classifier smoothed with Gaussian noise: prediction and certification.

    Parameters
    ----------
    base_model : torch.nn.Module or callable
        A torch module mapping a batch to ``(batch, K)`` scores, or any callable taking a numpy
        array ``(batch, *input_shape)`` and returning ``(batch, K)`` scores or ``(batch,)``
        labels. Plain callables need no torch.
    sigma : float
        Standard deviation of the Gaussian noise (in the input's units).
    num_classes : int
        ``K``.
    batch_size : int
        Noisy inputs per call of the base model. Points are packed into full batches.

    Examples
    --------
    >>> import numpy as np
    >>> def halfspace(batch):  # class 1 right of 0 along the first axis
    ...     return (batch[:, 0] > 0).astype(int)
    >>> smooth = SmoothedClassifier(halfspace, sigma=0.5, num_classes=2)
    >>> smooth.predict(np.array([1.0, 0.0]), n=1000, alpha=0.001, random_state=0)
    1
    >>> cert = smooth.certify(np.array([1.0, 0.0]), 1, n0=100, n=10_000, alpha=0.001,
    ...                       random_state=0)
    >>> 0.7 < cert.radius_std < 1.0  # the true radius is 1
    True
    """

    ABSTAIN = ABSTAIN

    def __init__(self, base_model: Any, sigma: float, num_classes: int, *, batch_size: int = 1000):
        if not callable(base_model):
            raise InputError.bad("base_model", "a torch module or a callable", base_model)
        self.base_model = base_model
        self.sigma = _check_sigma(sigma)
        self.num_classes = check_positive_int(num_classes, "num_classes", minimum=2)
        self.batch_size = check_positive_int(batch_size, "batch_size")

    def __repr__(self) -> str:
        return (
            f"SmoothedClassifier({type(self.base_model).__name__}, sigma={self.sigma:g}, "
            f"num_classes={self.num_classes}, batch_size={self.batch_size})"
        )

    # -- sampling -----------------------------------------------------------------------------

    def _as_inputs(self, X: Any, name: str) -> np.ndarray:
        arr = as_float_array(X, name)
        if arr.ndim == 0:
            raise InputError.bad(name, "an input array (at least 1 dimension)", X)
        # torch modules run in float32: convert once, not per batch.
        return arr.astype(np.float32) if is_torch_module(self.base_model) else arr

    def _count(self, X: np.ndarray, num: int, streams: list[np.random.Generator]) -> np.ndarray:
        labels_of = LabelFunction(self.base_model, self.num_classes)
        return count_labels(
            labels_of, X, num, streams, self.sigma, self.num_classes, self.batch_size
        )

    def sample_counts(self, X: Any, num: int, *, random_state: Any = None) -> np.ndarray:
        """Label counts of ``num`` noisy copies of each input in the batch ``X``.

        Point ``i`` draws its noise from its own stream (entropy of ``random_state``, index
        ``i``), so its counts do not depend on the batch size or on the other points.

        Returns
        -------
        (len(X), K) int64 array
        """
        X = self._as_inputs(X, "X")
        if X.ndim < 2:
            raise InputError.bad("X", "a batch of inputs (one more axis than one input)", X)
        num = check_positive_int(num, "num")
        streams = point_streams(_entropy(random_state), range(len(X)))
        return self._count(X, num, streams)

    # -- prediction and certification ----------------------------------------------------------

    def predict(self, x: Any, n: int, alpha: float, *, random_state: Any = None) -> int:
        """Cohen's PREDICT: the top class of ``n`` noisy samples, or ``ABSTAIN`` (-1).

        Abstains when the two-sided binomial test of the top count against the runner-up
        (``scipy.stats.binomtest``) has p-value above ``alpha``; otherwise the returned class
        is the smoothed classifier's with probability at least ``1 - alpha``.

        Parameters
        ----------
        x : array-like
            One input (no batch axis).
        n : int
            Noisy samples.
        alpha : float
            Failure probability, in (0, 0.5].
        random_state : None, int or numpy Generator
        """
        x = self._as_inputs(x, "x")
        n = check_positive_int(n, "n")
        alpha = _check_alpha(alpha)
        counts = self._count(x[None], n, point_streams(_entropy(random_state), [0]))[0]
        order = np.argsort(-counts, kind="stable")
        pvalue = _stats.prediction_pvalue(counts[order[0]], counts[order[1]])
        return ABSTAIN if pvalue > alpha else int(order[0])

    def certify(
        self,
        x: Any,
        y: int,
        n0: int,
        n: int,
        alpha: float,
        cost_matrix: Any = None,
        *,
        random_state: Any = None,
    ) -> Certificate:
        """Certify one input: the standard, cost-sensitive, combined and pair radii.

        Parameters
        ----------
        x : array-like
            One input (no batch axis).
        y : int
            Its true (seed) class; the harmful targets are ``{j : cost_matrix[y, j] > 0}``.
        n0, n : int
            Selection samples (choose the top class) and estimation samples (bound it).
        alpha : float
            Failure probability, in (0, 0.5]; each certificate holds with probability at least
            ``1 - alpha``.
        cost_matrix : (K, K) array-like, optional
            Default: every mistake harmful.
        random_state : None, int or numpy Generator

        Returns
        -------
        Certificate
        """
        x = self._as_inputs(x, "x")
        result = certify_dataset(
            self, x[None], [y], n0=n0, n=n, alpha=alpha, cost_matrix=cost_matrix,
            random_state=random_state,
        )  # fmt: skip
        return result.certificate(0)


def _entropy(random_state: Any) -> int:
    """The integer entropy of a run's per-point streams (fresh when ``random_state`` is None)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)  # validates: a non-negative int
        return int(random_state)
    return int(check_random_state(random_state).integers(0, 2**63))


# ---------------------------------------------------------------------------------------------
# Datasets


def certify_dataset(
    classifier: SmoothedClassifier,
    X: Any,
    y: Any,
    *,
    n0: int = 100,
    n: int = 10_000,
    alpha: float = 0.001,
    cost_matrix: Any = None,
    random_state: Any = None,
    checkpoint: str | Path | None = None,
    n_jobs: int | None = 1,
    dask_scheduler: str | None = None,
    points_per_task: int | None = None,
    progress: bool | Callable[[int, int], None] = False,
) -> DatasetCertificate:
    """Certify every point of a dataset, batched, in parallel, resumable.

    Parameters
    ----------
    classifier : SmoothedClassifier
    X : array-like of shape (m, *input_shape)
    y : array-like of shape (m,)
        True class indices.
    n0, n : int
        Selection and estimation samples per point (``n0 <= n``).
    alpha : float
        Per-point failure probability, in (0, 0.5].
    cost_matrix : (K, K) array-like, optional
        Default: every mistake harmful.
    random_state : None, int or numpy Generator
        Point ``i`` draws from its own stream keyed by this seed and ``i``: the result does not
        depend on ``n_jobs``, ``points_per_task``, batch sizes or interruptions.
    checkpoint : path, optional
        A JSONL file recording each finished point's counts. A rerun with the same file skips
        the recorded points and gives the same result as an uninterrupted run; with
        ``random_state=None`` it reuses the seed stored in the file. Another model, data, sigma,
        n0, n or seed is refused. alpha and the cost matrix may change between runs.
    n_jobs : int or None
        joblib workers over tasks of points (None or 1: in this process; -1: all cores).
    dask_scheduler : str, optional
        Address of a Dask scheduler; the tasks then run on that cluster through joblib's dask
        backend (needs ``distributed``).
    points_per_task : int, optional
        Points per task and per checkpoint write (default: about 200,000 samples' worth).
    progress : bool or callable
        True: a progress bar on stderr; a callable receives ``(points_done, points_total)``.

    Returns
    -------
    DatasetCertificate

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [-0.3], [0.2]])
    >>> smooth = SmoothedClassifier(lambda b: (b[:, 0] > 0).astype(int), 0.5, 2)
    >>> result = certify_dataset(smooth, X, [1, 0, 1], n=2000, random_state=0)
    >>> result.certified_accuracy([0.0, 0.5], "std").round(2).tolist()
    [1.0, 0.33]
    """
    if not isinstance(classifier, SmoothedClassifier):
        raise InputError.bad("classifier", "a SmoothedClassifier", classifier)
    X = classifier._as_inputs(X, "X")
    if X.ndim < 2:
        raise InputError.bad("X", "a batch of inputs (one more axis than one input)", X)
    num_classes = classifier.num_classes
    labels = _check_class_array(y, "y", num_classes, len(X))
    n0 = check_positive_int(n0, "n0")
    n = check_positive_int(n, "n")
    if n0 > n:
        raise InputError.bad("n0", f"at most n = {n} selection samples", n0)
    alpha = _check_alpha(alpha)
    costs = check_cost_matrix(cost_matrix, num_classes)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int)):
        raise InputError.bad("n_jobs", "an int or None", n_jobs)
    chunk = points_per_task or max(1, min(_MAX_POINTS_PER_CHUNK, _SAMPLES_PER_CHUNK // (n0 + n)))
    chunk = check_positive_int(chunk, "points_per_task")

    stored = None if checkpoint is None else CheckpointStore.stored_entropy(checkpoint)
    entropy = stored if random_state is None and stored is not None else _entropy(random_state)
    store = None
    if checkpoint is not None:
        header = _run_header(classifier, X, n0, n, entropy)
        store = CheckpointStore(checkpoint, header)
    done = {} if store is None else dict(store.records)
    pending = [i for i in range(len(X)) if i not in done]
    tasks = [pending[k : k + chunk] for k in range(0, len(pending), chunk)]

    tops = np.zeros(len(X), dtype=np.intp)
    counts = np.zeros((len(X), num_classes), dtype=np.int64)
    for i, (top, row) in done.items():
        tops[i], counts[i] = top, row
    report = progress_reporter(progress, len(X), "certifying")
    finished = len(done)
    report(finished)
    runs = _run_tasks(classifier, X, tasks, n0, n, entropy, n_jobs, dask_scheduler)
    try:
        with eval_mode(classifier.base_model):  # once for the run: workers never switch it
            for indices, task_tops, task_counts in runs:
                tops[indices], counts[indices] = task_tops, task_counts
                if store is not None:
                    store.append(indices, task_tops, task_counts)
                finished += len(indices)
                report(finished)
    finally:
        report(None)
    return DatasetCertificate.from_counts(
        tops, counts, labels, sigma=classifier.sigma, alpha=alpha, cost_matrix=costs, n0=n0
    )


def _sample_task(classifier, X_task, indices, n0, n, entropy):
    """Selection then estimation counts of a few points, each from its own stream."""
    streams = point_streams(entropy, indices)
    selection = classifier._count(X_task, n0, streams)
    estimation = classifier._count(X_task, n, streams)  # the streams continue: fresh noise
    return indices, np.argmax(selection, axis=1), estimation


def _run_tasks(classifier, X, tasks, n0, n, entropy, n_jobs, dask_scheduler):
    """Yield finished tasks as they complete, in this process, in joblib workers or on Dask."""
    if not tasks:
        return
    if dask_scheduler is None and (n_jobs is None or n_jobs == 1):
        for indices in tasks:
            yield _sample_task(classifier, X[indices], indices, n0, n, entropy)
        return
    import joblib

    jobs = (
        joblib.delayed(_sample_task)(classifier, X[indices], indices, n0, n, entropy)
        for indices in tasks
    )
    if dask_scheduler is None:
        yield from joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs)
        return
    try:
        from dask.distributed import Client
    except ImportError:
        raise ConfigError.missing_extra("distributed", "dask") from None
    with Client(dask_scheduler), joblib.parallel_config(backend="dask"):
        yield from joblib.Parallel(return_as="generator_unordered")(jobs)


def _run_header(classifier: SmoothedClassifier, X: np.ndarray, n0: int, n: int, entropy: int):
    """What identifies a certification run's samples (alpha and costs act after sampling)."""
    data = hashlib.sha256(np.ascontiguousarray(X).tobytes())
    data.update(repr(X.shape).encode())
    return {
        "data_sha256": data.hexdigest(),
        "model_sha256": _model_fingerprint(classifier.base_model),
        "num_classes": classifier.num_classes,
        "sigma": classifier.sigma,
        "n0": n0,
        "n": n,
        "entropy": entropy,
    }


def _model_fingerprint(model: Any) -> str | None:
    """A hash of a torch module's parameters and buffers; None for other callables."""
    if not is_torch_module(model):
        return None
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()

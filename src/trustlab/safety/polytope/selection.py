"""Honest detection numbers: settings chosen by cross-validation on training data only, one
evaluation on held-out data, bootstrap intervals.

:func:`select_detector` chooses the layer and the settings of a detector (the safety polytope's
``n_facets`` and ``facet_l1``, or a standardised logistic probe's ``C``) by stratified k-fold
cross-validation on the training rows alone: the setting with the highest mean validation AUROC
wins (ties go to the first setting in grid order, which lists simpler settings first).
:func:`compare_detectors` does that for both detectors, refits each winner on all training rows,
scores the held-out rows once, and reports each AUROC with a stratified percentile bootstrap
interval and the paired interval of their difference (the same resample for both detectors).

The activations of every candidate layer are passed in at once (``(n, n_layers, d)``, e.g.
``prompt_activations(model, prompts, layers=[...])``), so a model is run once per prompt set.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_n_jobs,
    check_positive_int,
    check_probability,
    check_random_state,
)
from trustlab._numerics import auroc_rows
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError

__all__ = [
    "DetectorSelection",
    "DetectorComparison",
    "select_detector",
    "compare_detectors",
    "bootstrap_auroc",
    "BootstrapInterval",
    "auroc",
    "DETECTORS",
    "POLYTOPE_GRID",
    "PROBE_GRID",
]

DETECTORS = ("polytope", "probe")
#: Polytope settings searched by default: few facets and a strong L1 penalty suit a few hundred
#: prompts in hundreds of dimensions; simpler settings first (they win ties).
POLYTOPE_GRID = {"n_facets": (2, 4, 8), "facet_l1": (1e-1, 1e-2, 1e-3)}
#: Inverse regularisation strengths of the logistic probe, strongest regularisation first.
PROBE_GRID = {"C": (1e-3, 1e-2, 1e-1, 1.0, 10.0)}


def auroc(unsafe: Any, scores: Any) -> float:
    """Area under the ROC curve, unsafe (True/1) = positive class: the Mann-Whitney statistic
    with average ranks for ties (equal to ``sklearn.metrics.roc_auc_score``).

    Examples
    --------
    >>> from trustlab.safety.polytope.selection import auroc
    >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    labels = _as_labels(unsafe)
    values = as_float_array(scores, "scores", ndim=1)
    if len(values) != len(labels):
        raise InputError.bad("scores", f"{len(labels)} scores (one per label)", len(values))
    return float(auroc_rows(labels, values[None, :])[0])


@dataclass(frozen=True)
class BootstrapInterval(Result):
    """A statistic with its stratified percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    level: float
    n_bootstrap: int

    def summary(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def bootstrap_auroc(
    unsafe: Any,
    scores: Any,
    *,
    other: Any = None,
    n_bootstrap: int = 2000,
    level: float = 0.95,
    random_state: Any = 0,
) -> BootstrapInterval:
    """AUROC with a stratified percentile bootstrap interval (unsafe and safe rows resampled
    separately, so every resample has both classes). With ``other`` (scores of a second
    detector on the same rows): the interval of ``AUROC(scores) - AUROC(other)``, both computed
    on each resample (paired).

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.safety.polytope.selection import bootstrap_auroc
    >>> y = np.r_[np.zeros(50), np.ones(50)]
    >>> s = y + np.random.default_rng(0).normal(size=100)
    >>> ci = bootstrap_auroc(y, s, random_state=0)
    >>> ci.low < ci.estimate < ci.high
    True
    """
    labels = _as_labels(unsafe)
    values = as_float_array(scores, "scores", shape=(len(labels),))
    second = None if other is None else as_float_array(other, "other", shape=(len(labels),))
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap", minimum=10)
    level = check_probability(level, "level")
    rng = check_random_state(random_state)
    index = _stratified_resamples(labels, n_bootstrap, rng)  # (B, n)
    resampled = labels[index[0]]  # stratified: the same labels in every resample
    stats = auroc_rows(resampled, values[index])
    estimate = auroc_rows(labels, values[None, :])[0]
    if second is not None:
        stats = stats - auroc_rows(resampled, second[index])
        estimate = estimate - auroc_rows(labels, second[None, :])[0]
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(stats, [tail, 100.0 - tail])
    return BootstrapInterval(float(estimate), float(low), float(high), level, n_bootstrap)


def _stratified_resamples(labels: np.ndarray, n_bootstrap: int, rng) -> np.ndarray:
    parts = []
    for cls in (True, False):
        rows = np.flatnonzero(labels == cls)
        parts.append(rows[rng.integers(0, len(rows), size=(n_bootstrap, len(rows)))])
    return np.concatenate(parts, axis=1)


@dataclass(frozen=True)
class DetectorSelection(Result):
    """Cross-validated choice of a detector's layer and settings (training rows only).

    Attributes
    ----------
    detector : str
        "polytope" or "probe".
    layers : tuple of int
        The candidate layers.
    settings : tuple of dict
        One entry per (layer, setting) tried, in grid order: ``layer``, the setting's
        parameters, ``cv_auroc`` (mean over folds) and ``cv_std`` (standard deviation over
        folds).
    best : dict
        The chosen entry.
    n_splits, random_state : int
        Stratified k-fold cross-validation with this seed (folds and detector seeds).
    """

    detector: str
    layers: tuple[int, ...]
    settings: tuple[dict, ...]
    best: dict
    n_splits: int
    random_state: int

    @property
    def params(self) -> dict[str, Any]:
        """The chosen detector parameters (without the layer and the scores)."""
        return {k: v for k, v in self.best.items() if k not in ("layer", "cv_auroc", "cv_std")}

    @property
    def layer(self) -> int:
        return int(self.best["layer"])

    def summary(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        return (
            f"{self.detector}: layer {self.layer}, {params} chosen by {self.n_splits}-fold CV "
            f"on training rows (AUROC {self.best['cv_auroc']:.3f} +/- {self.best['cv_std']:.3f} "
            f"over folds; {len(self.settings)} settings tried)"
        )

    def plot(self, ax=None):
        """Best cross-validated AUROC per layer. Returns the Axes."""
        ax = new_axes(ax, figsize=(5.0, 3.5))
        best = {}
        for row in self.settings:
            best[row["layer"]] = max(best.get(row["layer"], 0.0), row["cv_auroc"])
        ax.plot(list(best), list(best.values()), marker="o", label=self.detector)
        ax.set_xlabel("layer")
        ax.set_ylabel("best CV AUROC")
        ax.legend()
        return ax


def select_detector(
    acts: Any,
    unsafe: Any,
    layers: Sequence[int],
    *,
    detector: str = "polytope",
    grid: dict[str, Sequence[Any]] | None = None,
    n_splits: int = 4,
    random_state: int = 0,
    n_jobs: int | None = None,
    **polytope_params: Any,
) -> DetectorSelection:
    """Choose a detector's layer and settings by stratified k-fold CV on training rows.

    Parameters
    ----------
    acts : array-like (n, n_layers, d)
        Training activations of every candidate layer (``layers[j]`` is ``acts[:, j]``).
    unsafe : array-like (n,)
        1/True for unsafe rows.
    layers : sequence of int
        The layer of each slice of ``acts``.
    detector : {"polytope", "probe"}
        The safety polytope (``SafetyPolytope``, score ``max_k c_k``) or a logistic regression
        on standardised activations (score: its decision function).
    grid : dict, optional
        Parameter name -> values (default :data:`POLYTOPE_GRID` or :data:`PROBE_GRID`).
    n_splits : int, default 4
    random_state : int, default 0
        Seeds the folds and every polytope fit.
    n_jobs : int, optional
        Processes for the cross-validation fits (joblib; None: 1, -1: every core). Every fit
        is seeded, so the selection is the same for any value.
    **polytope_params
        Further fixed ``SafetyPolytope`` parameters (e.g. ``max_epochs``).

    Returns
    -------
    DetectorSelection
    """
    detector = check_choice(detector, "detector", DETECTORS)
    X, labels, layer_list = _check_layered(acts, unsafe, layers)
    n_splits = check_positive_int(n_splits, "n_splits", minimum=2)
    _check_seed(random_state)
    grid = _check_grid(detector, grid, "grid", polytope_params)
    names = list(grid)
    combos = list(itertools.product(*(grid[k] for k in names)))
    workers = check_n_jobs(n_jobs)
    folds = _folds(labels, n_splits, int(random_state))
    jobs = [
        (j, dict(zip(names, combo, strict=True)), fold)
        for j in range(len(layer_list))
        for combo in combos
        for fold in folds
    ]
    if workers == 1:
        flat = [
            _cv_score(detector, params, polytope_params, X[:, j], labels, fold, random_state)
            for j, params, fold in jobs
        ]
    else:
        from joblib import Parallel, delayed

        flat = Parallel(n_jobs=workers)(
            delayed(_cv_score)(detector, params, polytope_params, X[:, j], labels, fold,
                               random_state)
            for j, params, fold in jobs
        )  # fmt: skip
    rows = []
    for index, (j, params, _) in enumerate(jobs[:: len(folds)]):  # one row per (layer, combo)
        layer = layer_list[j]
        scores = flat[index * len(folds) : (index + 1) * len(folds)]
        rows.append(
            {
                "layer": layer,
                **params,
                "cv_auroc": float(np.mean(scores)),
                "cv_std": float(np.std(scores)),
            }
        )
    best = max(rows, key=lambda r: r["cv_auroc"])  # max keeps the first of equal scores
    return DetectorSelection(
        detector=detector,
        layers=tuple(layer_list),
        settings=tuple(rows),
        best=best,
        n_splits=n_splits,
        random_state=int(random_state),
    )


def _default_grid(detector: str) -> dict[str, tuple]:
    return POLYTOPE_GRID if detector == "polytope" else PROBE_GRID


def _check_seed(random_state: Any) -> None:
    """An integer in [0, 2**32-1] (scikit-learn's folds take no other; -1 or 2**32 was a raw
    ValueError): it seeds the folds and every fit, and the result records it."""
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise InputError.bad(
            "random_state", "an integer seed (it seeds the folds and every fit)", random_state
        )
    if not 0 <= random_state <= 2**32 - 1:
        raise InputError.bad(
            "random_state", "a seed in [0, 2**32-1] (seeds the folds)", random_state
        )


def _check_grid(detector: str, grid: Any, name: str, fixed: dict) -> dict[str, list]:
    """The grid as name -> list of values: a dict of non-empty sequences of the detector's
    parameters (and fixed polytope parameters it knows)."""
    if grid is None:
        grid = _default_grid(detector)
    if not isinstance(grid, dict):
        raise InputError.bad(name, "a dict parameter name -> values", grid)
    if detector == "polytope":
        from trustlab.safety.polytope.estimator import SafetyPolytope

        known = set(SafetyPolytope().get_params()) - {"random_state"}
        unknown = sorted(set(fixed) - known)
        if unknown:
            raise InputError.bad(
                "polytope_params", f"SafetyPolytope parameters ({', '.join(sorted(known))})",
                ", ".join(unknown),
            )  # fmt: skip
    else:
        from sklearn.linear_model import LogisticRegression

        known = set(LogisticRegression().get_params()) - {"max_iter"}
    out = {}
    for key, values in grid.items():
        if key not in known:
            raise InputError.bad(
                name, f"parameters of the {detector} ({', '.join(sorted(known))})", key
            )
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not len(values):
            raise InputError.bad(name, f"a non-empty sequence of values for {key!r}", values)
        out[key] = list(values)
    if detector == "probe":
        _check_probe_settings(out, name)
    return out


def _check_probe_settings(grid: dict[str, list], name: str) -> None:
    """Each combination of probe settings fitted once on four toy rows, so that a value
    scikit-learn refuses (``C=-1``, ``penalty='l1'`` with the default solver) is an InputError
    naming the grid before any cross-validation, not a raw ValueError from inside it."""
    import warnings

    from sklearn.linear_model import LogisticRegression

    toy_x, toy_y = np.arange(4.0)[:, None], np.array([0, 0, 1, 1])
    for combo in itertools.product(*grid.values()):
        params = dict(zip(grid, combo, strict=True))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                LogisticRegression(max_iter=5000, **params).fit(toy_x, toy_y)
        except (ValueError, TypeError) as exc:
            raise InputError.bad(
                name, f"LogisticRegression settings it accepts ({exc})", params
            ) from exc


def _folds(labels: np.ndarray, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedKFold

    counts = np.bincount(labels.astype(int), minlength=2)
    if counts.min() < n_splits:
        raise InputError.bad(
            "unsafe",
            f"at least {n_splits} rows of each class for {n_splits}-fold CV",
            f"{counts[1]} unsafe and {counts[0]} safe rows",
        )
    splitter = StratifiedKFold(n_splits, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(labels)), labels))


def _cv_score(detector, params, fixed, X, labels, fold, seed) -> float:
    train, valid = fold
    model = _fit(detector, params, fixed, X[train], labels[train], seed)
    return float(auroc_rows(labels[valid], _score(model, X[valid])[None, :])[0])


def _fit(detector: str, params: dict, fixed: dict, X: np.ndarray, labels: np.ndarray, seed):
    if detector == "polytope":
        from trustlab.safety.polytope.estimator import SafetyPolytope

        return SafetyPolytope(**fixed, **params, random_state=seed).fit(X, labels)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    probe = LogisticRegression(max_iter=5000, **params)
    return make_pipeline(StandardScaler(), probe).fit(X, labels)


def _score(model: Any, X: np.ndarray) -> np.ndarray:
    return np.asarray(model.decision_function(X), dtype=np.float64)


@dataclass(frozen=True)
class DetectorComparison(Result):
    """The safety polytope against a logistic probe: both chosen on training rows by CV, refit
    on all training rows, evaluated once on held-out rows.

    Attributes
    ----------
    polytope, probe : DetectorSelection
        How each detector's layer and settings were chosen.
    n_unsafe, n_safe : int
        Held-out rows of each class.
    polytope_auroc, probe_auroc : BootstrapInterval
        Held-out AUROC (unsafe = positive) with its bootstrap interval.
    difference : BootstrapInterval
        ``polytope_auroc - probe_auroc`` with its paired bootstrap interval.
    seed_aurocs : tuple of float
        Held-out AUROC of the chosen polytope refit with each of ``polytope_seeds`` (the
        spread due to training randomness alone).
    polytope_seeds : tuple of int
        Training seeds of the final polytopes (the first one gives ``polytope_auroc``).
    """

    polytope: DetectorSelection
    probe: DetectorSelection
    n_unsafe: int
    n_safe: int
    polytope_auroc: BootstrapInterval
    probe_auroc: BootstrapInterval
    difference: BootstrapInterval
    seed_aurocs: tuple[float, ...]
    polytope_seeds: tuple[int, ...]
    polytope_scores: np.ndarray = internal_field()
    probe_scores: np.ndarray = internal_field()

    def summary(self) -> str:
        lo, hi = min(self.seed_aurocs), max(self.seed_aurocs)
        return "\n".join(
            [
                self.polytope.summary(),
                self.probe.summary(),
                f"held-out ({self.n_unsafe} unsafe / {self.n_safe} safe), AUROC with "
                f"{100 * self.difference.level:.0f}% bootstrap intervals: polytope "
                f"{self.polytope_auroc.summary()}, probe {self.probe_auroc.summary()}, "
                f"difference {self.difference.summary()}",
                f"polytope over {len(self.seed_aurocs)} training seeds: {lo:.3f}-{hi:.3f}",
            ]
        )


def compare_detectors(
    train_acts: Any,
    train_unsafe: Any,
    test_acts: Any,
    test_unsafe: Any,
    layers: Sequence[int],
    *,
    polytope_grid: dict[str, Sequence[Any]] | None = None,
    probe_grid: dict[str, Sequence[Any]] | None = None,
    n_splits: int = 4,
    polytope_seeds: Sequence[int] = (0,),
    n_bootstrap: int = 2000,
    random_state: int = 0,
    n_jobs: int | None = None,
    **polytope_params: Any,
) -> DetectorComparison:
    """Nested evaluation of the safety polytope against a logistic probe.

    Both detectors' layer and settings are chosen by :func:`select_detector` on the training
    rows alone; each winner is refit on all training rows and scored once on the held-out rows.

    Parameters
    ----------
    train_acts, test_acts : array-like (n, n_layers, d)
        Activations of every candidate layer, training and held-out rows.
    train_unsafe, test_unsafe : array-like
        1/True for unsafe rows.
    layers : sequence of int
    polytope_grid, probe_grid : dict, optional
        Defaults :data:`POLYTOPE_GRID`, :data:`PROBE_GRID`.
    n_splits : int, default 4
    polytope_seeds : sequence of int, default (0,)
        Training seeds of the final polytope; every one is scored (``seed_aurocs``), the first
        gives the reported interval.
    n_bootstrap : int, default 2000
    random_state : int, default 0
        Seeds the cross-validation folds, the selection fits and the bootstrap.
    n_jobs : int, optional
        Processes for the selection's cross-validation fits (see :func:`select_detector`).
    **polytope_params
        Further fixed ``SafetyPolytope`` parameters.

    Returns
    -------
    DetectorComparison
    """
    Xtr, ytr, layer_list = _check_layered(train_acts, train_unsafe, layers, "train_")
    Xte = as_float_array(test_acts, "test_acts", ndim=3)
    if Xte.shape[1:] != Xtr.shape[1:]:  # layers matched train_acts: test_acts is the odd one
        raise InputError.bad(
            "test_acts", f"shape (n, {Xtr.shape[1]}, {Xtr.shape[2]}) as train_acts", Xte.shape
        )
    Xte, yte, _ = _check_layered(Xte, test_unsafe, layers, "test_")
    seeds = [int(s) for s in as_1d(polytope_seeds, "polytope_seeds")]
    _check_seed(random_state)
    _check_grid("polytope", polytope_grid, "polytope_grid", polytope_params)
    _check_grid("probe", probe_grid, "probe_grid", {})
    common = {"n_splits": n_splits, "random_state": random_state, "n_jobs": n_jobs}
    sap = select_detector(Xtr, ytr, layer_list, grid=polytope_grid, **common, **polytope_params)
    probe = select_detector(Xtr, ytr, layer_list, detector="probe", grid=probe_grid, **common)
    j_sap, j_probe = layer_list.index(sap.layer), layer_list.index(probe.layer)
    sap_scores = [
        _score(
            _fit("polytope", sap.params, polytope_params, Xtr[:, j_sap], ytr, seed),
            Xte[:, j_sap],
        )
        for seed in seeds
    ]
    probe_model = _fit("probe", probe.params, {}, Xtr[:, j_probe], ytr, random_state)
    probe_scores = _score(probe_model, Xte[:, j_probe])
    boot = {"n_bootstrap": n_bootstrap, "random_state": random_state}
    return DetectorComparison(
        polytope=sap,
        probe=probe,
        n_unsafe=int(yte.sum()),
        n_safe=int((~yte).sum()),
        polytope_auroc=bootstrap_auroc(yte, sap_scores[0], **boot),
        probe_auroc=bootstrap_auroc(yte, probe_scores, **boot),
        difference=bootstrap_auroc(yte, sap_scores[0], other=probe_scores, **boot),
        seed_aurocs=tuple(float(auroc_rows(yte, s[None, :])[0]) for s in sap_scores),
        polytope_seeds=tuple(seeds),
        polytope_scores=sap_scores[0],
        probe_scores=probe_scores,
    )


def _as_labels(unsafe: Any, name: str = "unsafe") -> np.ndarray:
    labels = as_1d(unsafe, name)
    if not set(np.unique(labels).tolist()) <= {0, 1}:
        raise InputError.bad(name, "0/1 or boolean labels (1 = unsafe)", np.unique(labels))
    labels = labels.astype(bool)
    if labels.all() or not labels.any():
        raise InputError.bad(name, "labels of both classes", "one class only")
    return labels


def _check_layered(acts: Any, unsafe: Any, layers: Sequence[int], prefix: str = ""):
    X = as_float_array(acts, f"{prefix}acts", ndim=3)
    labels = _as_labels(unsafe, f"{prefix}unsafe")
    if len(labels) != len(X):
        raise InputError.bad(f"{prefix}unsafe", f"{len(X)} labels (one per row)", len(labels))
    try:  # one layer, None or a 0-d array stopped on Python's raw "not iterable" TypeError
        values = list(layers)
    except TypeError:
        raise InputError.bad(
            "layers", f"a sequence of layers (one per slice of {prefix}acts)", layers
        ) from None
    layer_list = [check_positive_int(v, "layers", minimum=0) for v in values]
    if len(layer_list) != X.shape[1] or len(set(layer_list)) != len(layer_list):
        raise InputError.bad(
            "layers", f"{X.shape[1]} distinct layers (one per slice of {prefix}acts)", layer_list
        )
    return X, labels, layer_list

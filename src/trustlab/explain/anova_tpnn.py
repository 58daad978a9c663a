"""ANOVA-TPNN: an interpretable network with a unique functional ANOVA decomposition.

The model (Park, Kong, Choi, Park, Kim, ICML 2025) is a functional ANOVA model

    f(x) = beta_0 + sum_j g_j(x_j) + sum_{j<l} g_jl(x_j, x_l) (+ higher orders, if asked)

whose components are tensor products of sigmoid basis neurons,

    g_S(x_S) = sum_k beta_{S,k} prod_{j in S} phi(x_j | b_{S,k,j}, gamma_{S,k,j}),
    phi(x | b, gamma) = sigma(-(x - b)/gamma) + c sigma((x - b)/gamma),
    c = -sum_i sigma(-(x_ij - b)/gamma) / sum_i sigma((x_ij - b)/gamma),

so that every neuron sums to zero over the training values of its feature. A product of such
neurons then sums to zero over the training values of each of its variables whatever the other
variables are: the components satisfy the sum-to-zero conditions of the functional ANOVA under
the product of the empirical marginals, which makes the decomposition unique. The component
plots therefore stay the same across seeds and resamples, unlike those of neural additive
models, whose pairs can absorb parts of the main effects.

What trustlab does beyond the authors' code:

- the constants c are recomputed on the full training data after training (the authors keep the
  last minibatch's values), in float64, so the conditions hold to rounding error;
- an explicit intercept beta_0; multiclass classification (one output per class, softmax; the
  components are also centred across classes, which leaves the probabilities unchanged);
- categorical features get a categorical neuron ``phi(x) = w[x] - mean_i w[x_i]`` (a learned
  value per level, centred over the data), which satisfies the same condition; a level unseen in
  training contributes 0;
- pairs can be chosen automatically (``interactions="auto"``) by a FAST-like screen.

Training follows the authors: inputs mapped by a uniform quantile transform to [-1, 1]
(categorical features are left to their neuron), data-aware initialisation, the constants taken
on each minibatch during training and differentiated through, Adam with betas (0.95, 0.998),
the best checkpoint on a validation split (early stopping). Torch is needed for ``fit`` only;
predictions and components are computed in numpy float64.

References
----------
Park, S., Kong, I., Choi, Y., Park, C., Kim, Y. (2025). Tensor Product Neural Networks for
Functional ANOVA Model. ICML 2025, arXiv:2502.15215.
Lengerich, B., Tan, S., Chang, C.-H., Hooker, G., Caruana, R. (2020). Purifying Interaction
Effects with the Functional ANOVA. AISTATS.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, log_softmax
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import as_1d, check_choice, check_in_range, check_positive_int
from trustlab._checks import check_random_state as _check_random_state
from trustlab.errors import ConfigError, InputError

__all__ = [
    "ANOVATPNN",
    "ComponentValues",
    "ComponentImportance",
    "ComponentGrid",
    "ComponentStability",
    "component_stability",
]

MIN_VALIDATION_ROWS = 10
MIN_TRAINING_ROWS = 20
MAX_AUTO_CLASSES = 20  # task="auto": integer targets with more distinct values are regression
MODEL_FILE = "model.pt"
META_FILE = "model.json"
FORMAT_VERSION = 1
PAIR_SEPARATOR = " & "
_CHUNK_ELEMENTS = 2**21  # rows are evaluated in blocks of about this many neuron values
_SCREEN_BINS = 8
_SCREEN_SWEEPS = 5


def _require_torch():
    try:
        import torch
    except ImportError:
        raise ConfigError.missing_extra("torch", "torch") from None
    return torch


# =========================================================================== input preparation


def _as_frame(X: Any, name: str = "X") -> pd.DataFrame:
    """A DataFrame with string column names (arrays get x0, x1, ...)."""
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        try:
            arr = np.asarray(X)
        except Exception:
            raise InputError.bad(name, "a 2-dimensional array or DataFrame", X) from None
        if arr.ndim != 2:
            raise InputError.bad(name, "a 2-dimensional array or DataFrame", arr)
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])]).infer_objects()
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise InputError.bad(name, "at least one row and one column", frame)
    frame = frame.copy(deep=False)
    frame.columns = [str(c) for c in frame.columns]
    if len(set(frame.columns)) != frame.shape[1]:
        raise InputError.bad(name, "distinct column names", list(frame.columns))
    return frame


def _is_categorical_dtype(column: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _python_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _sorted_levels(values: Sequence[Any]) -> tuple:
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types: order by text
        return tuple(sorted(values, key=str))


@dataclass(frozen=True)
class _FeatureMap:
    """Per feature: numeric (quantile transform to [-1, 1]) or categorical (integer codes)."""

    names: tuple[str, ...]
    categorical: tuple[bool, ...]
    quantiles: tuple[np.ndarray | None, ...]
    levels: tuple[tuple | None, ...]

    @classmethod
    def fit(cls, frame: pd.DataFrame, categorical: Sequence[bool], n_quantiles: int) -> _FeatureMap:
        quantiles, levels = [], []
        for name, is_cat in zip(frame.columns, categorical, strict=True):
            column = frame[name]
            if is_cat:
                _check_no_missing(column, name)
                found = _sorted_levels([_python_value(v) for v in pd.unique(column)])
                if len(found) < 2:
                    raise InputError.bad(
                        "X", f"feature {name!r} to take at least 2 values", f"only {found[0]!r}"
                    )
                quantiles.append(None)
                levels.append(found)
            else:
                values = _numeric_column(column, name)
                if values.min() == values.max():
                    raise InputError.bad(
                        "X",
                        f"feature {name!r} to vary (a constant carries no information)",
                        f"the constant {values[0]:g} in every row",
                    )
                count = min(n_quantiles, len(values))
                probabilities = np.linspace(0.0, 100.0, count)
                quantiles.append(np.maximum.accumulate(np.percentile(values, probabilities)))
                levels.append(None)
        return cls(
            tuple(frame.columns),
            tuple(bool(c) for c in categorical),
            tuple(quantiles),
            tuple(levels),
        )

    @property
    def n_levels(self) -> int:
        return max([len(lv) for lv in self.levels if lv is not None], default=0)

    def transform(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``x_num`` (quantile-transformed numeric features, 0 elsewhere) and ``x_cat`` (level
        codes of categorical features, -1 for an unseen level, 0 elsewhere)."""
        n = len(frame)
        x_num = np.zeros((n, len(self.names)))
        x_cat = np.zeros((n, len(self.names)), dtype=np.int64)
        for j, name in enumerate(self.names):
            column = frame[name]
            if self.categorical[j]:
                _check_no_missing(column, name)
                codes = {level: i for i, level in enumerate(self.levels[j])}
                x_cat[:, j] = [codes.get(_python_value(v), -1) for v in column]
            else:
                x_num[:, j] = self.quantile_scale(j, _numeric_column(column, name))
        return x_num, x_cat

    def quantile_scale(self, j: int, values: np.ndarray) -> np.ndarray:
        """scikit-learn's uniform QuantileTransformer, mapped to [-1, 1]. Interpolating up and
        down and averaging puts a tied value in the middle of its range of quantiles."""
        q = self.quantiles[j]
        r = np.linspace(0.0, 1.0, len(q))
        u = 0.5 * (np.interp(values, q, r) - np.interp(-values, -q[::-1], -r[::-1]))
        u[values == q[-1]] = 1.0
        u[values == q[0]] = 0.0
        return 2.0 * np.clip(u, 0.0, 1.0) - 1.0

    def raw_grid(self, j: int, n_points: int) -> np.ndarray:
        """Raw values to draw feature j on: levels, or an even grid joined with quantiles (so both
        the range and the dense parts of the data are resolved)."""
        if self.categorical[j]:
            return np.asarray(self.levels[j], dtype=object)
        q = self.quantiles[j]
        even = np.linspace(q[0], q[-1], n_points)
        spread = q[np.linspace(0, len(q) - 1, n_points).round().astype(int)]
        return np.unique(np.concatenate([even, spread]))

    def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {
            "names": list(self.names),
            "categorical": list(self.categorical),
            "levels": [None if lv is None else list(lv) for lv in self.levels],
        }
        arrays = {f"quantiles.{j}": q for j, q in enumerate(self.quantiles) if q is not None}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> _FeatureMap:
        quantiles = tuple(arrays.get(f"quantiles.{j}") for j in range(len(meta["names"])))
        levels = tuple(None if lv is None else tuple(lv) for lv in meta["levels"])
        return cls(tuple(meta["names"]), tuple(meta["categorical"]), quantiles, levels)


def _guess_task(target: np.ndarray) -> str:
    """Classification for labels (strings, booleans, or integer values with at most
    MAX_AUTO_CLASSES distinct ones), regression for other numbers."""
    if target.dtype.kind not in "iuf":
        return "classification"
    values = target.astype(np.float64)
    if np.all(values == np.round(values)) and len(np.unique(values)) <= MAX_AUTO_CLASSES:
        return "classification"
    return "regression"


def _check_no_missing(column: pd.Series, name: str) -> None:
    missing = column.isna().to_numpy()
    if missing.any():
        raise InputError(
            f"X: expected no missing values, got {int(missing.sum())} in feature {name!r} (first "
            f"at row {int(np.argmax(missing))}); impute them first",
            argument="X",
        )


def _numeric_column(column: pd.Series, name: str) -> np.ndarray:
    if _is_categorical_dtype(column):
        raise InputError.bad("X", f"numbers in the numeric feature {name!r}", column.to_numpy())
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(values)
    if bad.any():
        raise InputError(
            f"X: expected finite values, got {values[bad][0]} in feature {name!r} (first at row "
            f"{int(np.argmax(bad))}, {int(bad.sum())} in all); impute or drop them first",
            argument="X",
        )
    return values


def _categorical_flags(frame: pd.DataFrame, categorical_features: Any) -> list[bool]:
    names = list(frame.columns)
    if isinstance(categorical_features, str) and categorical_features == "auto":
        return [_is_categorical_dtype(frame[c]) for c in names]
    if categorical_features is None:
        return [False] * len(names)
    if isinstance(categorical_features, str) or not isinstance(categorical_features, Sequence):
        raise InputError.bad(
            "categorical_features",
            "'auto', None or a list of feature names or indices",
            categorical_features,
        )
    chosen = {
        names[_feature_index(item, names, "categorical_features")] for item in categorical_features
    }
    return [c in chosen for c in names]


def _feature_index(item: Any, names: Sequence[str], argument: str) -> int:
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if 0 <= item < len(names):
            return int(item)
        raise InputError.bad(argument, f"feature indices in [0, {len(names) - 1}]", item)
    if isinstance(item, str) and item in names:
        return names.index(item)
    raise InputError.bad(argument, "feature names among " + ", ".join(map(repr, names)), item)


# =========================================================================== components


def _resolve_terms(
    order: int, interactions: Any, names: Sequence[str]
) -> list[tuple[int, ...]] | str:
    """The interaction terms (tuples of feature indices), or "auto" to screen for pairs."""
    d = len(names)
    if isinstance(interactions, str):
        check_choice(interactions, "interactions", ("all", "auto"))
        if interactions == "auto":
            return "auto"
        return [t for m in range(2, order + 1) for t in itertools.combinations(range(d), m)]
    if not isinstance(interactions, Sequence):
        raise InputError.bad(
            "interactions", "'all', 'auto' or a list of feature tuples", interactions
        )
    terms: list[tuple[int, ...]] = []
    seen: set[frozenset] = set()
    for item in interactions:
        members = [s.strip() for s in item.split("&")] if isinstance(item, str) else item
        if isinstance(members, str) or not isinstance(members, Sequence):
            raise InputError.bad("interactions", "tuples of feature names or indices", item)
        term = tuple(sorted(_feature_index(m, names, "interactions") for m in members))
        if not 2 <= len(term) <= order or len(set(term)) != len(term):
            raise InputError.bad(
                "interactions", f"terms of 2 to order={order} distinct features", item
            )
        if frozenset(term) in seen:
            raise InputError.bad("interactions", "each term once", item)
        seen.add(frozenset(term))
        terms.append(term)
    return terms


def _screen_pairs(x_num, x_cat, categorical, target: np.ndarray, max_pairs: int) -> list[tuple]:
    """Pairs ranked by how much of an additive model's residual their cells explain (FAST-like).

    Each feature is cut into 8 equal-frequency bins (categorical: its levels); an additive
    model of bin means is backfitted to the target (one column per class for classification);
    a pair's score is the count-weighted sum of squares of the residual's cell means over its
    2-D bins, less what noise alone gives on as many cells.
    """
    n, d = x_num.shape
    bins = []
    for j in range(d):
        if categorical[j]:
            bins.append(x_cat[:, j])
        else:
            bins.append(
                np.minimum(((x_num[:, j] + 1.0) / 2.0 * _SCREEN_BINS).astype(int), _SCREEN_BINS - 1)
            )
    residual = target - target.mean(axis=0)
    fitted = np.zeros((d, *residual.shape))
    for _ in range(_SCREEN_SWEEPS):
        for j in range(d):
            partial = residual + fitted[j]
            fitted[j] = _bin_means(bins[j], partial)[bins[j]]
            residual = partial - fitted[j]
    noise = float(np.mean(residual**2))
    scores = {}
    for j, k in itertools.combinations(range(d), 2):
        cells = bins[j] * (bins[k].max() + 1) + bins[k]
        means = _bin_means(cells, residual)
        counts = np.bincount(cells)
        used = counts > 0
        explained = float((counts[used, None] * means[used] ** 2).sum()) / n
        scores[(j, k)] = explained - (used.sum() - 1) * noise / n
    ranked = sorted(scores, key=lambda pair: -scores[pair])
    return sorted(p for p in ranked[:max_pairs] if scores[p] > 0)


def _bin_means(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    counts = np.bincount(codes).astype(float)
    sums = np.stack(
        [
            np.bincount(codes, weights=values[:, t], minlength=len(counts))
            for t in range(values.shape[1])
        ],
        axis=1,
    )
    return sums / np.maximum(counts, 1.0)[:, None]


@dataclass(frozen=True)
class _TermGroup:
    """The fitted components of one order and one numeric/categorical pattern, in float64, with
    their sum-to-zero constants. Parameters are laid out per position p (the p-th feature of
    every component), as in the torch network."""

    features: np.ndarray  # (C, m) feature indices
    pattern: np.ndarray  # (m,) bool: is position p categorical
    threshold: np.ndarray  # (m, C, K)
    log_temperature: np.ndarray  # (m, C, K)
    level_weights: np.ndarray  # (m, C, L, K); L = 0 without categorical positions
    beta: np.ndarray  # (C, K, O)
    mean_sigmoid: np.ndarray | None = None  # (m, C, K), mean of sigma(z) over the training rows
    mean_level: np.ndarray | None = None  # (m, C, K), mean of w[x] over the training rows

    ARRAYS = (
        "features",
        "pattern",
        "threshold",
        "log_temperature",
        "level_weights",
        "beta",
        "mean_sigmoid",
        "mean_level",
    )

    def _row_chunk(self) -> int:
        return max(1, _CHUNK_ELEMENTS // max(1, self.beta.size))

    def _sigmoids(self, p: int, x_num: np.ndarray) -> np.ndarray:
        x = x_num[:, self.features[:, p]]  # (n, C)
        return expit((x[:, :, None] - self.threshold[p]) * np.exp(-self.log_temperature[p]))

    def _levels(self, p: int, x_cat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        codes = x_cat[:, self.features[:, p]]  # (n, C); -1: a level unseen in training
        component = np.arange(codes.shape[1])[None, :]
        values = self.level_weights[p][component, np.maximum(codes, 0)]  # (n, C, K)
        return values, (codes >= 0)[:, :, None]

    def with_constants(self, x_num: np.ndarray, x_cat: np.ndarray) -> _TermGroup:
        """The same group with its constants computed on these (the training) rows."""
        mean_sigmoid = np.ones(self.threshold.shape)
        mean_level = np.zeros(self.threshold.shape)
        chunk = self._row_chunk()
        for p, is_categorical in enumerate(self.pattern):
            total = np.zeros(self.threshold.shape[1:])
            for start in range(0, len(x_num), chunk):
                if is_categorical:
                    total += self._levels(p, x_cat[start : start + chunk])[0].sum(axis=0)
                else:
                    total += self._sigmoids(p, x_num[start : start + chunk]).sum(axis=0)
            (mean_level if is_categorical else mean_sigmoid)[p] = total / len(x_num)
        return _replace(self, mean_sigmoid=mean_sigmoid, mean_level=mean_level)

    def neuron(self, p: int, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        """phi of position p for every row, component and basis: (n, C, K)."""
        if self.pattern[p]:
            values, known = self._levels(p, x_cat)
            return np.where(known, values - self.mean_level[p], 0.0)
        return 1.0 - self._sigmoids(p, x_num) / self.mean_sigmoid[p]

    def values(self, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        """Component values (n, C, O)."""
        chunk = self._row_chunk()
        parts = []
        for start in range(0, len(x_num), chunk):
            rows = slice(start, start + chunk)
            product = self.neuron(0, x_num[rows], x_cat[rows])
            for p in range(1, len(self.pattern)):
                product = product * self.neuron(p, x_num[rows], x_cat[rows])
            parts.append(np.einsum("nck,cko->nco", product, self.beta))
        return np.concatenate(parts, axis=0)


def _replace(group: _TermGroup, **changes) -> _TermGroup:
    fields = {name: getattr(group, name) for name in _TermGroup.ARRAYS}
    fields.update(changes)
    return _TermGroup(**fields)


# =========================================================================== results


def _component_name(features: Sequence[str]) -> str:
    return PAIR_SEPARATOR.join(features)


def _jsonable_classes(classes: np.ndarray | None) -> list | None:
    return None if classes is None else [_python_value(c) for c in classes]


@dataclass(frozen=True)
class ComponentValues:
    """Every component of a fitted :class:`ANOVATPNN` at some rows.

    Attributes
    ----------
    names : tuple of str
        Component names: the feature name for a main effect, ``"a & b"`` for a pair.
    terms : tuple of tuple of str
        The features of each component.
    values : numpy.ndarray
        ``(n, C)`` for regression (in the target's units) and binary classification (logit of
        the second class); ``(n, C, n_classes)`` class logits for multiclass.
    intercept : float or numpy.ndarray
        beta_0 (one per class for multiclass).
    classes : numpy.ndarray or None
        The class labels for classification.
    """

    names: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    values: np.ndarray = field(repr=False)
    intercept: float | np.ndarray
    classes: np.ndarray | None = None

    def total(self) -> np.ndarray:
        """``intercept + sum of all components``: the model's prediction (regression) or its
        logits (classification), exactly as ``decision_function`` returns them."""
        return self.intercept + self.values.sum(axis=1)

    def __getitem__(self, name: str | Sequence[str]) -> np.ndarray:
        """The values of one component, by name or by its features (in any order)."""
        return self.values[:, self.index(name)]

    def index(self, name: str | Sequence[str]) -> int:
        if isinstance(name, str) and name in self.names:
            return self.names.index(name)
        if not isinstance(name, str) and isinstance(name, Sequence):
            wanted = frozenset(map(str, name))
            for i, term in enumerate(self.terms):
                if frozenset(term) == wanted:
                    return i
        raise InputError.bad("component", "one of " + ", ".join(map(repr, self.names)), name)

    def to_dict(self) -> dict:
        return {
            "names": list(self.names),
            "terms": [list(t) for t in self.terms],
            "values": self.values.tolist(),
            "intercept": np.asarray(self.intercept).tolist(),
            "classes": _jsonable_classes(self.classes),
        }

    def summary(self) -> str:
        spread = np.sqrt(
            (self.values**2).reshape(len(self.values), len(self.names), -1).mean(axis=(0, 2))
        )
        lines = [f"{len(self.names)} components at {len(self.values)} rows (root mean square):"]
        order = np.argsort(-spread)
        lines += [f"  {self.names[i]:<30} {spread[i]:.4g}" for i in order[:10]]
        return "\n".join(lines)


@dataclass(frozen=True)
class ComponentImportance:
    """How much each component varies over the data: its root mean square (the components have
    mean zero over the training data, so this is their standard deviation there).

    Attributes
    ----------
    names : tuple of str
    terms : tuple of tuple of str
    importance : numpy.ndarray
        ``(C,)``; for multiclass the root mean square over rows and classes.
    per_class : numpy.ndarray or None
        ``(C, n_classes)`` for multiclass.
    classes : numpy.ndarray or None
    n_rows : int
        The rows it was measured on.
    """

    names: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    importance: np.ndarray
    per_class: np.ndarray | None
    classes: np.ndarray | None
    n_rows: int

    def ranked(self) -> list[tuple[str, float]]:
        """``(name, importance)`` pairs, most important first."""
        order = np.argsort(-self.importance, kind="stable")
        return [(self.names[i], float(self.importance[i])) for i in order]

    def top(self, n: int = 5) -> list[str]:
        """The names of the ``n`` most important components."""
        return [name for name, _ in self.ranked()[:n]]

    def to_dict(self) -> dict:
        return {
            "components": [
                {
                    "name": self.names[i],
                    "features": list(self.terms[i]),
                    "importance": float(self.importance[i]),
                    **(
                        {}
                        if self.per_class is None
                        else {"per_class": [float(v) for v in self.per_class[i]]}
                    ),
                }
                for i in np.argsort(-self.importance, kind="stable")
            ],
            "classes": _jsonable_classes(self.classes),
            "n_rows": int(self.n_rows),
        }

    def summary(self) -> str:
        lines = [f"ANOVA-TPNN component importance (root mean square over {self.n_rows} rows):"]
        lines += [f"  {name:<30} {value:.4g}" for name, value in self.ranked()[:15]]
        if len(self.names) > 15:
            lines.append(f"  ... and {len(self.names) - 15} more")
        return "\n".join(lines)

    def plot(self, ax=None, top: int = 15):
        """Horizontal bars of the ``top`` most important components."""
        ax = _axes(ax, figsize=(6.0, 0.3 * min(top, len(self.names)) + 1.2))
        ranked = self.ranked()[:top][::-1]
        ax.barh([name for name, _ in ranked], [value for _, value in ranked], color="tab:blue")
        ax.set_xlabel("root mean square of the component")
        ax.set_title("ANOVA-TPNN component importance")
        ax.grid(axis="x", alpha=0.3)
        return ax


@dataclass(frozen=True)
class ComponentGrid:
    """One component on a grid of raw feature values, for plotting or export.

    Attributes
    ----------
    name : str
    features : tuple of str
    axes : tuple of numpy.ndarray
        Raw values of each feature (levels for a categorical feature).
    categorical : tuple of bool
    values : numpy.ndarray
        Shape ``(len(axes[0]), ...)`` per feature, plus a last axis of classes for multiclass.
    classes : numpy.ndarray or None
    """

    name: str
    features: tuple[str, ...]
    axes: tuple[np.ndarray, ...]
    categorical: tuple[bool, ...]
    values: np.ndarray = field(repr=False)
    classes: np.ndarray | None = None

    @property
    def multiclass(self) -> bool:
        return self.values.ndim == len(self.axes) + 1

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "features": list(self.features),
            "axes": [[_python_value(v) for v in axis] for axis in self.axes],
            "categorical": list(self.categorical),
            "values": self.values.tolist(),
            "classes": _jsonable_classes(self.classes),
        }

    def summary(self) -> str:
        return (
            f"component {self.name}: range [{self.values.min():.4g}, {self.values.max():.4g}] "
            f"on a grid of {' x '.join(str(len(a)) for a in self.axes)} points"
        )

    def _class_index(self, target: Any) -> int | None:
        if not self.multiclass:
            return None
        if target is None:  # the class whose component varies most
            flat = self.values.reshape(-1, self.values.shape[-1])
            return int(np.argmax(flat.std(axis=0)))
        matches = [i for i, c in enumerate(self.classes) if c == target or str(c) == str(target)]
        if not matches:
            raise InputError.bad("target", "one of the classes " + repr(list(self.classes)), target)
        return matches[0]

    def plot(self, ax=None, target: Any = None):
        """A curve (numeric main effect), bars (categorical main effect), a heat map (two numeric
        or two categorical features) or one curve per level (numeric x categorical).

        For multiclass, ``target`` picks the class; main effects show every class by default,
        pairs the class whose component varies most.
        """
        ax = _axes(ax)
        k = self._class_index(target)
        if len(self.axes) == 1:
            self._plot_main(ax, target, k)
        elif len(self.axes) == 2:
            self._plot_pair(ax, k)
        else:
            raise InputError.bad("component", "a main effect or a pair to plot", self.name)
        return ax

    def _plot_main(self, ax, target, k) -> None:
        values = self.values if self.multiclass else self.values[:, None]
        columns = range(values.shape[1]) if (target is None or k is None) else [k]
        labels = [None] if not self.multiclass else [f"class {self.classes[i]}" for i in columns]
        axis = self.axes[0]
        if self.categorical[0]:
            width = 0.8 / len(labels)
            positions = np.arange(len(axis))
            for i, (c, label) in enumerate(zip(columns, labels, strict=True)):
                ax.bar(
                    positions + (i - (len(labels) - 1) / 2) * width,
                    values[:, c],
                    width,
                    label=label,
                )
            ax.set_xticks(positions, [str(v) for v in axis])
        else:
            for c, label in zip(columns, labels, strict=True):
                ax.plot(axis.astype(float), values[:, c], label=label)
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_xlabel(self.features[0])
        ax.set_ylabel(self._value_label(k if len(labels) == 1 else None))
        if self.multiclass and len(labels) > 1:
            ax.legend(fontsize="small")
        ax.set_title(f"main effect of {self.features[0]}")

    def _plot_pair(self, ax, k) -> None:
        values = self.values if k is None else self.values[..., k]
        a, b = self.axes
        cat_a, cat_b = self.categorical
        if cat_a != cat_b:  # one curve per level of the categorical feature
            if cat_a:
                values, a, b = values.T, b, a
            levels, names = b, (self.features[0], self.features[1])
            numeric_name = names[1] if cat_a else names[0]
            level_name = names[0] if cat_a else names[1]
            for i, level in enumerate(levels):
                ax.plot(a.astype(float), values[:, i], label=f"{level_name} = {level}")
            ax.axhline(0.0, color="0.6", lw=0.8)
            ax.set_xlabel(numeric_name)
            ax.set_ylabel(self._value_label(k))
            ax.legend(fontsize="small")
        else:
            limit = float(np.abs(values).max()) or 1.0
            if cat_a:
                mesh = ax.imshow(
                    values.T, origin="lower", aspect="auto", cmap="RdBu_r", vmin=-limit, vmax=limit
                )
                ax.set_xticks(range(len(a)), [str(v) for v in a])
                ax.set_yticks(range(len(b)), [str(v) for v in b])
            else:
                mesh = ax.pcolormesh(
                    a.astype(float),
                    b.astype(float),
                    values.T,
                    shading="nearest",
                    cmap="RdBu_r",
                    vmin=-limit,
                    vmax=limit,
                )
            ax.figure.colorbar(mesh, ax=ax, label=self._value_label(k))
            ax.set_xlabel(self.features[0])
            ax.set_ylabel(self.features[1])
        ax.set_title(f"interaction {self.name}")

    def _value_label(self, k) -> str:
        if k is not None:
            return f"component (logit of class {self.classes[k]})"
        return "component (logits)" if self.multiclass else "component"


def _axes(ax, figsize=(6.0, 4.0)):
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize).add_subplot()


# =========================================================================== the estimator


class ANOVATPNN(BaseEstimator):
    """ANOVA-TPNN: a glass-box network whose main effects and interactions are unique.

    The prediction is ``intercept + sum of components`` exactly (the logit, or class logits, for
    classification). Each component sums to zero over the training data in each of its
    variables, so the decomposition is the functional ANOVA one under the product of the
    training marginals: refitting with another seed or on a resample gives the same curves.

    Parameters
    ----------
    order : int, default 2
        The largest component order with ``interactions="all"`` (1: main effects only).
    n_basis : int, default 10
        Basis neurons per component (the paper's K_S).
    interactions : "all", "auto" or list, default "all"
        The components beyond the main effects: every subset of 2 to ``order`` features;
        ``"auto"``: up to ``max_interactions`` pairs chosen by a FAST-like screen of an additive
        model's residuals; or a list of feature tuples (names or indices), e.g.
        ``[("age", "income")]`` or ``["age & income"]``.
    max_interactions : int, default 10
        The most pairs ``"auto"`` keeps.
    task : {"auto", "regression", "classification"}, default "auto"
        ``"auto"``: classification for labels (strings, booleans, or whole numbers with at most
        20 distinct values), regression for other numbers. Say which for counts and the like.
    categorical_features : "auto", None or list, default "auto"
        ``"auto"``: non-numeric and boolean columns; or the names/indices of the categorical
        features.
    penalty : float, default 0.0
        lambda of the authors' penalty ``lambda * mean over components of g_S(x)^2``.
    learning_rate : float, default 2e-2
        Adam's step size (betas (0.95, 0.998) as the authors'; their notebook uses 1e-2).
    batch_size : int, default 256
    max_epochs : int, default 300
    patience : int, default 20
        Stop after this many epochs without improving the validation loss by 1e-4 (relative);
        the best checkpoint is kept.
    validation_fraction : float, default 0.15
        Rows held out for early stopping (stratified for classification). They still count as
        training data for the quantile transform and the sum-to-zero constants.
    n_quantiles : int, default 1000
        Quantiles of the uniform quantile transform (at most the number of rows).
    random_state : None, int or numpy Generator
        Initialisation, split and minibatch order; the same seed gives the same model.
    n_threads : int or None, default None
        Torch threads while fitting (None: torch's setting, capped at the available cores).

    Attributes
    ----------
    task_ : str
    classes_ : numpy.ndarray
        Class labels (classification only).
    feature_names_ : list of str
    categorical_ : list of bool
    terms_ : list of tuple of str
        The features of each component: main effects first, then the interactions.
    component_names_ : list of str
    intercept_ : float or numpy.ndarray
    importance_ : numpy.ndarray
        Root mean square of each component over the training rows.
    history_ : dict
        Per-epoch training and validation losses, ``best_epoch``, ``n_epochs``.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray
        Only when fitted on a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.explain.anova_tpnn import ANOVATPNN
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2))
    >>> y = np.sin(3 * X[:, 0]) + X[:, 0] * X[:, 1]
    >>> model = ANOVATPNN(max_epochs=30, random_state=0, n_threads=1).fit(X, y)
    >>> model.component_names_
    ['x0', 'x1', 'x0 & x1']
    >>> parts = model.components(X)
    >>> bool(np.allclose(parts.total(), model.predict(X)))
    True
    >>> bool(abs(parts["x0"].mean()) < 1e-9)  # each component has mean zero on the data
    True
    """

    def __init__(
        self,
        order=2,
        n_basis=10,
        interactions="all",
        *,
        max_interactions=10,
        task="auto",
        categorical_features="auto",
        penalty=0.0,
        learning_rate=2e-2,
        batch_size=256,
        max_epochs=300,
        patience=20,
        validation_fraction=0.15,
        n_quantiles=1000,
        random_state=None,
        n_threads=None,
    ):
        self.order = order
        self.n_basis = n_basis
        self.interactions = interactions
        self.max_interactions = max_interactions
        self.task = task
        self.categorical_features = categorical_features
        self.penalty = penalty
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.n_quantiles = n_quantiles
        self.random_state = random_state
        self.n_threads = n_threads

    def __sklearn_tags__(self):
        """A classifier or a regressor for scikit-learn when ``task`` says which; categorical
        (string) features are accepted."""
        from sklearn.utils import ClassifierTags, RegressorTags

        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.categorical = tags.input_tags.string = True
        if self.task == "classification":
            tags.estimator_type, tags.classifier_tags = "classifier", ClassifierTags()
        elif self.task == "regression":
            tags.estimator_type, tags.regressor_tags = "regressor", RegressorTags()
        return tags

    # ------------------------------------------------------------------ fitting

    def _check_params(self) -> None:
        check_positive_int(self.order, "order")
        check_positive_int(self.n_basis, "n_basis")
        check_positive_int(self.max_interactions, "max_interactions", minimum=0)
        check_choice(self.task, "task", ("auto", "regression", "classification"))
        check_in_range(self.penalty, "penalty", 0.0, math.inf)
        check_in_range(self.learning_rate, "learning_rate", 0.0, math.inf, low_open=True)
        check_positive_int(self.batch_size, "batch_size")
        check_positive_int(self.max_epochs, "max_epochs")
        check_positive_int(self.patience, "patience")
        check_in_range(self.validation_fraction, "validation_fraction", 0.0, 0.5, low_open=True)
        check_positive_int(self.n_quantiles, "n_quantiles", minimum=2)
        if self.n_threads is not None:
            check_positive_int(self.n_threads, "n_threads")

    def fit(self, X, y, *, progress: Callable[[int, int, float], None] | None = None):
        """Fit the model; returns self.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, d)
            No missing values; numeric features must vary.
        y : array-like, shape (n,)
        progress : callable, optional
            Called after each epoch as ``progress(epoch, max_epochs, validation_loss)``.
        """
        self._check_params()
        rng = _check_random_state(self.random_state)
        frame = _as_frame(X)
        target = as_1d(y, "y")
        if len(target) != len(frame):
            raise InputError.bad("y", f"one value per row of X ({len(frame)})", target)
        features = _FeatureMap.fit(
            frame, _categorical_flags(frame, self.categorical_features), self.n_quantiles
        )
        task, encoded, classes = self._encode_target(target)
        train_idx, valid_idx = self._split(
            len(frame), encoded if task != "regression" else None, rng
        )
        x_num, x_cat = features.transform(frame)
        terms = _resolve_terms(self.order, self.interactions, features.names)
        if terms == "auto":
            terms = self._screen(x_num, x_cat, features, encoded, task, classes, train_idx)
        mains = [(j,) for j in range(len(features.names))]
        terms = mains + sorted(terms, key=len)  # grouped by order, as the network computes them
        self._set_structure(features, terms, task, classes, isinstance(X, pd.DataFrame))
        self._train(x_num, x_cat, encoded, train_idx, valid_idx, task, classes, rng, progress)
        self._n_fit = len(frame)
        self.importance_, self._importance_per_class_ = self._importance_values(
            self._component_array(x_num, x_cat)
        )
        return self

    def _encode_target(self, target: np.ndarray) -> tuple[str, np.ndarray, np.ndarray | None]:
        from sklearn.utils.multiclass import type_of_target

        kind = type_of_target(target)
        task = self.task
        if task == "auto":
            task = _guess_task(target)
        if task == "regression":
            try:
                values = np.asarray(target, dtype=np.float64)
            except (TypeError, ValueError):
                raise InputError.bad("y", "numbers for regression", target) from None
            if not np.isfinite(values).all() or values.std() == 0:
                raise InputError.bad("y", "finite, non-constant numbers for regression", target)
            self._output_shift_ = float(values.mean())
            self._output_scale_ = float(values.std())
            return "regression", (values - self._output_shift_) / self._output_scale_, None
        if kind not in ("binary", "multiclass"):
            raise InputError.bad(
                "y",
                "class labels for classification (task='classification')",
                f"a target of type {kind!r}",
            )
        classes, encoded = np.unique(target, return_inverse=True)
        if len(classes) < 2:
            raise InputError.bad("y", "at least 2 classes", f"only {classes[0]!r}")
        self._output_shift_, self._output_scale_ = 0.0, 1.0
        task = "binary" if len(classes) == 2 else "multiclass"
        return task, encoded, classes

    def _split(self, n: int, labels: np.ndarray | None, rng: np.random.Generator):
        from sklearn.model_selection import train_test_split

        n_valid = math.ceil(self.validation_fraction * n)
        if n_valid < MIN_VALIDATION_ROWS or n - n_valid < MIN_TRAINING_ROWS:
            need = max(
                math.ceil(MIN_VALIDATION_ROWS / self.validation_fraction),
                MIN_VALIDATION_ROWS + MIN_TRAINING_ROWS,
            )
            raise InputError(
                f"X: expected at least {need} rows, so that the validation split "
                f"(validation_fraction={self.validation_fraction}) holds {MIN_VALIDATION_ROWS} "
                f"rows and training {MIN_TRAINING_ROWS}, got {n} rows",
                argument="X",
            )
        if labels is not None:
            counts = np.bincount(labels)
            if counts.min() < 2:
                raise InputError.bad(
                    "y",
                    "at least 2 rows of each class (for the stratified validation split)",
                    f"{int(counts.min())} row(s) of a class",
                )
        seed = int(rng.integers(2**31 - 1))
        try:
            return train_test_split(
                np.arange(n), test_size=n_valid, random_state=seed, stratify=labels
            )
        except ValueError:  # too few rows of a class for a stratified split of this size
            return train_test_split(np.arange(n), test_size=n_valid, random_state=seed)

    def _screen(self, x_num, x_cat, features, encoded, task, classes, train_idx):
        if self.order < 2 or self.max_interactions == 0:
            return []
        if task == "regression":
            target = encoded[:, None]
        else:
            target = (encoded[:, None] == np.arange(len(classes))[None, :]).astype(float)
        return _screen_pairs(
            x_num[train_idx],
            x_cat[train_idx],
            features.categorical,
            target[train_idx],
            self.max_interactions,
        )

    def _set_structure(self, features, terms, loss, classes, from_frame: bool) -> None:
        self._features = features
        self._loss = "mse" if loss == "regression" else loss
        self.task_ = "regression" if self._loss == "mse" else "classification"
        if classes is not None:
            self.classes_ = classes
        elif hasattr(self, "classes_"):
            del self.classes_
        self.n_features_in_ = len(features.names)
        if from_frame:
            self.feature_names_in_ = np.asarray(features.names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.feature_names_ = list(features.names)
        self.categorical_ = list(features.categorical)
        self._term_indices = [tuple(t) for t in terms]
        self.terms_ = [tuple(features.names[j] for j in t) for t in terms]
        self.component_names_ = [_component_name(t) for t in self.terms_]

    def _groups(self) -> tuple[list[tuple[np.ndarray, tuple[bool, ...]]], np.ndarray]:
        """The components grouped by order and numeric/categorical pattern, as the network
        computes them, and ``order``: where each term's column is in the groups' concatenation."""
        categorical = self._features.categorical
        keys = [(len(t), tuple(categorical[j] for j in t)) for t in self._term_indices]
        groups, positions = [], []
        for key in sorted(set(keys)):
            members = [i for i, k in enumerate(keys) if k == key]
            groups.append((np.asarray([self._term_indices[i] for i in members], np.int64), key[1]))
            positions += members
        order = np.empty(len(positions), dtype=np.int64)
        order[np.asarray(positions)] = np.arange(len(positions))
        return groups, order

    def _initial_intercept(self, encoded, task, n_outputs) -> np.ndarray:
        if task == "regression":
            return np.zeros(1)
        counts = np.bincount(encoded, minlength=max(2, n_outputs)).astype(float)
        prior = counts / counts.sum()
        if task == "binary":
            return np.array([math.log(prior[1] / prior[0])])
        return np.log(np.maximum(prior, 1e-12))

    def _make_network(self, groups, order, n_levels, n_outputs):
        from trustlab.explain._anova_tpnn_torch import TPNNNetwork

        return TPNNNetwork(groups, order, n_levels, self.n_basis, n_outputs)

    def _train(self, x_num, x_cat, encoded, train_idx, valid_idx, task, classes, rng, progress):
        _require_torch()
        from trustlab.explain import _anova_tpnn_torch as backend

        n_outputs = len(classes) if task == "multiclass" else 1
        groups, order = self._groups()
        with backend.torch_threads(self.n_threads):
            network = self._make_network(groups, order, max(1, self._features.n_levels), n_outputs)
            network.initialize(
                x_num[train_idx], rng, self._initial_intercept(encoded, task, n_outputs)
            )
            data = backend.make_training_data(
                x_num, x_cat, encoded, train_idx, valid_idx, self._loss
            )
            self.history_ = backend.train_network(
                network,
                data,
                loss=self._loss,
                learning_rate=self.learning_rate,
                batch_size=self.batch_size,
                max_epochs=self.max_epochs,
                patience=self.patience,
                penalty=self.penalty,
                rng=rng,
                progress=progress,
            )
            self._finalise_network(network, x_num, x_cat)

    def _finalise_network(self, network, x_num, x_cat) -> None:
        """Float64 numpy parameters: the target's scale folded into beta and the intercept,
        multiclass outputs centred across classes, the sum-to-zero constants recomputed on all
        training rows."""
        exported = network.export()
        intercept = self._output_shift_ + self._output_scale_ * exported["intercept"]
        groups = []
        for arrays in exported["groups"]:
            beta = self._output_scale_ * arrays["beta"]
            if beta.shape[-1] > 1:  # softmax ignores a shift shared by all classes
                beta = beta - beta.mean(axis=-1, keepdims=True)
            group = _TermGroup(**{**arrays, "beta": beta})
            groups.append(group.with_constants(x_num, x_cat))
        if len(intercept) > 1:
            intercept = intercept - intercept.mean()
        self._term_groups = groups
        self._order = self._groups()[1]
        self._intercept = intercept
        self.intercept_ = float(intercept[0]) if len(intercept) == 1 else intercept.copy()

    # ------------------------------------------------------------------ inference

    def _component_array(self, x_num: np.ndarray, x_cat: np.ndarray) -> np.ndarray:
        """(n, C, O) component values in float64."""
        values = [group.values(x_num, x_cat) for group in self._term_groups]
        return np.concatenate(values, axis=1)[:, self._order]

    def _intercept_array(self) -> np.ndarray:
        return self._intercept

    def _transform(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Model inputs for X: columns by name when fitted on a DataFrame, else by position."""
        check_is_fitted(self, "terms_")
        frame = _as_frame(X)
        names = self._features.names
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = [c for c in names if c not in frame.columns]
            if missing:
                raise InputError.bad(
                    "X",
                    "the features " + ", ".join(map(repr, names)),
                    f"a table without {', '.join(map(repr, missing))}",
                )
            frame = frame[list(names)]
        elif frame.shape[1] != len(names):
            raise InputError.bad("X", f"{len(names)} columns", frame)
        else:
            frame.columns = list(names)
        return self._features.transform(frame)

    def components(self, X) -> ComponentValues:
        """Every component (main effects and interactions) at the rows of X.

        ``result.total()`` equals ``decision_function(X)`` (and ``predict(X)`` for regression)
        exactly: the prediction is computed as intercept plus the sum of these values.
        """
        x_num, x_cat = self._transform(X)
        values = self._component_array(x_num, x_cat)
        intercept = self._intercept_array()
        if values.shape[-1] == 1:
            values, intercept = values[..., 0], float(intercept[0])
        return ComponentValues(
            tuple(self.component_names_),
            tuple(self.terms_),
            values,
            intercept,
            getattr(self, "classes_", None),
        )

    def decision_function(self, X) -> np.ndarray:
        """``intercept + sum of components``: the prediction (regression), the logit of the second
        class (binary) or the class logits (multiclass, shape (n, n_classes))."""
        return self.components(X).total()

    def predict(self, X) -> np.ndarray:
        """Predicted values (regression) or class labels (classification)."""
        decision = self.decision_function(X)
        if self.task_ == "regression":
            return decision
        if decision.ndim == 1:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n, n_classes), columns in ``classes_`` order."""
        check_is_fitted(self, "terms_")
        if self.task_ != "classification":
            raise InputError.bad("task", "a classifier for predict_proba", "a regression model")
        decision = self.decision_function(X)
        if decision.ndim == 1:
            p = expit(decision)
            return np.column_stack([1.0 - p, p])
        return np.exp(log_softmax(decision, axis=1))

    def score(self, X, y) -> float:
        """Accuracy (classification) or R^2 (regression)."""
        from sklearn.metrics import accuracy_score, r2_score

        y = as_1d(y, "y")
        if self.task_ == "regression":
            return float(r2_score(y, self.predict(X)))
        return float(accuracy_score(y, self.predict(X)))

    def _importance_values(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        per_output = np.sqrt((values**2).mean(axis=0))  # (C, O)
        return np.sqrt((per_output**2).mean(axis=1)), per_output

    def importance(self, X=None) -> ComponentImportance:
        """Each component's root mean square: over the training rows (default) or over X."""
        check_is_fitted(self, "terms_")
        if X is None:
            overall, per_class, n_rows = self.importance_, self._importance_per_class_, self._n_fit
        else:
            overall, per_class = self._importance_values(self._component_array(*self._transform(X)))
            n_rows = len(_as_frame(X))
        multiclass = per_class.shape[1] > 1
        return ComponentImportance(
            tuple(self.component_names_),
            tuple(self.terms_),
            overall,
            per_class if multiclass else None,
            getattr(self, "classes_", None),
            n_rows,
        )

    def component_grid(self, component, n_points: int = 100) -> ComponentGrid:
        """One component on a grid of raw feature values (pairs: ``n_points`` // 3 per axis)."""
        check_is_fitted(self, "terms_")
        check_positive_int(n_points, "n_points", minimum=2)
        index = self._component_index(component)
        term = self._term_indices[index]
        per_axis = n_points if len(term) == 1 else max(2, n_points // 3)
        axes = [self._features.raw_grid(j, per_axis) for j in term]
        mesh = np.meshgrid(*[np.arange(len(a)) for a in axes], indexing="ij")
        x_num = np.zeros((mesh[0].size, len(self._features.names)))
        x_cat = np.zeros_like(x_num, dtype=np.int64)
        for j, axis, idx in zip(term, axes, mesh, strict=True):
            if self._features.categorical[j]:
                x_cat[:, j] = idx.ravel()
            else:
                x_num[:, j] = self._features.quantile_scale(j, axis.astype(float)[idx.ravel()])
        values = self._component_array(x_num, x_cat)[:, index, :]
        shape = tuple(len(a) for a in axes)
        values = values.reshape(*shape, -1)
        if values.shape[-1] == 1:
            values = values[..., 0]
        return ComponentGrid(
            self.component_names_[index],
            self.terms_[index],
            tuple(axes),
            tuple(self._features.categorical[j] for j in term),
            values,
            getattr(self, "classes_", None),
        )

    def plot_component(self, component, ax=None, target=None, n_points: int = 100):
        """Plot a main effect (curve or bars) or a pair (heat map); returns the Axes.

        ``component`` is a feature name or index (main effect), a pair of them, or a component
        name such as ``"age & income"``. ``target`` picks the class for multiclass models.
        """
        return self.component_grid(component, n_points).plot(ax=ax, target=target)

    def _component_index(self, component) -> int:
        names = self._features.names
        if isinstance(component, str):
            if component in self.component_names_:
                return self.component_names_.index(component)
            component = [s.strip() for s in component.split("&")]
        elif isinstance(component, (int, np.integer)) and not isinstance(component, bool):
            component = [int(component)]
        if isinstance(component, Sequence):
            try:
                wanted = tuple(sorted(_feature_index(c, names, "component") for c in component))
            except InputError:
                wanted = None
            for i, term in enumerate(self._term_indices):
                if wanted is not None and tuple(sorted(term)) == wanted:
                    return i
        raise InputError.bad(
            "component", "one of " + ", ".join(map(repr, self.component_names_)), component
        )

    # ------------------------------------------------------------------ saving

    def save(self, directory: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``model.pt`` (tensors, read back with ``torch.load(weights_only=True)``) and
        ``model.json`` (everything else) into ``directory``; returns both paths."""
        check_is_fitted(self, "terms_")
        torch = _require_torch()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        feature_meta, arrays = self._features.to_state()
        arrays["intercept"] = self._intercept
        arrays["importance"] = self.importance_
        arrays["importance_per_class"] = self._importance_per_class_
        for g, group in enumerate(self._term_groups):
            for name in _TermGroup.ARRAYS:
                arrays[f"group{g}.{name}"] = getattr(group, name)
        meta = {
            "format": "trustlab.ANOVATPNN",
            "version": FORMAT_VERSION,
            "params": _jsonable_params(self.get_params()),
            "task": self.task_,
            "loss": self._loss,
            "classes": _jsonable_classes(getattr(self, "classes_", None)),
            "features": feature_meta,
            "fitted_on_frame": hasattr(self, "feature_names_in_"),
            "terms": [list(t) for t in self._term_indices],
            "n_groups": len(self._term_groups),
            "n_fit": self._n_fit,
            "output_shift": self._output_shift_,
            "output_scale": self._output_scale_,
            "history": self.history_,
        }
        weights_path, meta_path = directory / MODEL_FILE, directory / META_FILE
        torch.save({k: torch.as_tensor(np.asarray(v)) for k, v in arrays.items()}, weights_path)
        meta_path.write_text(json.dumps(meta, indent=1))
        return weights_path, meta_path

    @classmethod
    def load(cls, directory: str | os.PathLike) -> ANOVATPNN:
        """Read a model written by :meth:`save`. No pickled code is executed: the tensors are read
        with ``torch.load(weights_only=True)`` and the rest is JSON."""
        torch = _require_torch()
        directory = Path(directory)
        weights_path, meta_path = directory / MODEL_FILE, directory / META_FILE
        if not weights_path.is_file() or not meta_path.is_file():
            raise InputError.bad(
                "model", f"a directory holding {MODEL_FILE} and {META_FILE}", str(directory)
            )
        try:
            meta = json.loads(meta_path.read_text())
            tensors = torch.load(weights_path, weights_only=True, map_location="cpu")
        except Exception as exc:
            raise InputError(
                f"model: could not read {directory} ({type(exc).__name__}: {exc})", argument="model"
            ) from exc
        if meta.get("format") != "trustlab.ANOVATPNN" or meta.get("version") != FORMAT_VERSION:
            raise InputError.bad(
                "model",
                f"a trustlab ANOVATPNN model (version {FORMAT_VERSION})",
                f"format {meta.get('format')!r} version {meta.get('version')!r}",
            )
        arrays = {k: v.numpy() for k, v in tensors.items()}
        model = cls(**_params_from_json(meta["params"]))
        model._restore(meta, arrays)
        return model

    def _restore(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        features = _FeatureMap.from_state(meta["features"], arrays)
        classes = None if meta["classes"] is None else np.asarray(meta["classes"])
        terms = [tuple(t) for t in meta["terms"]]
        self._set_structure(features, terms, meta["loss"], classes, meta["fitted_on_frame"])
        self._term_groups = [
            _TermGroup(**{name: arrays[f"group{g}.{name}"] for name in _TermGroup.ARRAYS})
            for g in range(meta["n_groups"])
        ]
        self._order = self._groups()[1]
        self._intercept = arrays["intercept"]
        self.intercept_ = (
            float(self._intercept[0]) if len(self._intercept) == 1 else self._intercept.copy()
        )
        self.importance_ = arrays["importance"]
        self._importance_per_class_ = arrays["importance_per_class"]
        self._n_fit = int(meta["n_fit"])
        self._output_shift_ = float(meta["output_shift"])
        self._output_scale_ = float(meta["output_scale"])
        self.history_ = meta["history"]


def _jsonable_params(params: dict) -> dict:
    def convert(value):
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, (list, tuple)):
            return [convert(v) for v in value]
        return None  # e.g. a Generator as random_state: not reproducible from a file anyway

    return {k: convert(v) for k, v in params.items()}


def _params_from_json(params: dict) -> dict:
    params = dict(params)
    if isinstance(params.get("interactions"), list):
        params["interactions"] = [
            tuple(t) if isinstance(t, list) else t for t in params["interactions"]
        ]
    return params


# =========================================================================== stability


@dataclass(frozen=True)
class ComponentStability:
    """How much the components of several fitted models agree on the same rows.

    Attributes
    ----------
    names : tuple of str
    mean_correlation : numpy.ndarray
        Per component, the mean Pearson correlation over all pairs of models (1 = identical
        curves up to scale).
    normalised_variance : numpy.ndarray
        Per component, each model's values divided by their root mean square, then the variance
        across models averaged over the rows (trustlab's version of the paper's stability
        score; 0 = identical up to scale, lower is more stable).
    raw_variance : numpy.ndarray
        The same without the normalisation.
    n_models, n_rows : int
    """

    names: tuple[str, ...]
    mean_correlation: np.ndarray
    normalised_variance: np.ndarray
    raw_variance: np.ndarray
    n_models: int
    n_rows: int

    @property
    def overall_correlation(self) -> float:
        """The mean over components of the mean pairwise correlation."""
        return float(np.nanmean(self.mean_correlation))

    def to_dict(self) -> dict:
        return {
            "components": {
                name: {
                    "mean_correlation": _finite_or_none(self.mean_correlation[i]),
                    "normalised_variance": _finite_or_none(self.normalised_variance[i]),
                    "raw_variance": _finite_or_none(self.raw_variance[i]),
                }
                for i, name in enumerate(self.names)
            },
            "overall_correlation": _finite_or_none(self.overall_correlation),
            "n_models": self.n_models,
            "n_rows": self.n_rows,
        }

    def summary(self) -> str:
        lines = [
            f"Component stability over {self.n_models} models and {self.n_rows} rows: mean "
            f"pairwise correlation {self.overall_correlation:.3f}"
        ]
        lines += [
            f"  {name:<30} r = {self.mean_correlation[i]:.3f}, normalised variance = "
            f"{self.normalised_variance[i]:.3g}"
            for i, name in enumerate(self.names)
        ]
        return "\n".join(lines)

    def plot(self, ax=None):
        """Bars of the mean pairwise correlation per component."""
        ax = _axes(ax, figsize=(6.0, 0.3 * len(self.names) + 1.2))
        ax.barh(list(self.names)[::-1], self.mean_correlation[::-1], color="tab:green")
        ax.set_xlim(min(0.0, float(np.nanmin(self.mean_correlation))), 1.0)
        ax.set_xlabel("mean pairwise correlation across models")
        ax.set_title(f"Component stability ({self.n_models} models)")
        return ax


def _finite_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def component_stability(models: Sequence[Any], X) -> ComponentStability:
    """Compare the components of several fitted models (different seeds or resamples) on X.

    Parameters
    ----------
    models : sequence of fitted models
        At least 2, each with ``components(X)`` giving the same component names (e.g.
        :class:`ANOVATPNN` fitted with different ``random_state``).
    X : array-like or DataFrame
        The rows to compare them on.

    Returns
    -------
    ComponentStability

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> runs = [ANOVATPNN(order=1, max_epochs=20, random_state=s, n_threads=1).fit(X, y)
    ...         for s in range(2)]
    >>> component_stability(runs, X).names
    ('x0', 'x1')
    """
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or len(models) < 2:
        raise InputError.bad("models", "a sequence of at least 2 fitted models", models)
    parts = [model.components(X) for model in models]
    names = parts[0].names
    for i, part in enumerate(parts[1:], start=1):
        if part.names != names:
            raise InputError.bad(f"models[{i}]", f"the components {list(names)}", list(part.names))
    n = len(parts[0].values)
    correlation, normalised, raw = [], [], []
    for c in range(len(names)):
        runs = np.stack([p.values[:, c].reshape(-1) for p in parts])  # (R, n * outputs)
        raw.append(float(runs.var(axis=0).mean()))
        norms = np.sqrt((runs**2).mean(axis=1, keepdims=True))
        with np.errstate(invalid="ignore", divide="ignore"):
            normalised.append(float((runs / norms).var(axis=0).mean()))
            matrix = np.corrcoef(runs)
        upper = matrix[np.triu_indices(len(runs), k=1)]
        correlation.append(float(upper.mean()))
    return ComponentStability(
        names, np.asarray(correlation), np.asarray(normalised), np.asarray(raw), len(models), n
    )

"""The internal form of a tree ensemble: :class:`Tree` and :class:`TreeEnsemble`.

A tree is a set of flat arrays (split feature, threshold, children, leaf values, where a missing
value goes); an ensemble is its trees, a constant offset per output, the comparison convention
(``x < t`` or ``x <= t`` goes left) and the dtype inputs are cast to before comparing. FastPD only
ever sees this form; the adapters (:mod:`._sklearn_trees`, :mod:`._boosters`) build it, and the
naming helpers here are shared by them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab.errors import InputError

__all__ = [
    "Tree",
    "TreeEnsemble",
    "SUPPORTED_MODELS",
    "LGBM_ZERO",
    "goes_left",
    "names_from",
    "categorical_refusal",
    "model_refusal",
    "boosting_outputs",
    "objective_kind",
]

SUPPORTED_MODELS = (
    "scikit-learn DecisionTreeRegressor/Classifier, RandomForestRegressor/Classifier, "
    "ExtraTreesRegressor/Classifier, GradientBoostingRegressor/Classifier, "
    "HistGradientBoostingRegressor/Classifier; xgboost Booster, XGBRegressor, XGBClassifier, "
    "XGBRFRegressor, XGBRFClassifier; lightgbm Booster, LGBMRegressor, LGBMClassifier"
)

# LightGBM treats |x| <= this as zero (kZeroThreshold in its sources).
LGBM_ZERO = 1e-35


@dataclass(frozen=True)
class Tree:
    """One tree as flat arrays over its nodes (node 0 is the root).

    ``value`` already carries the tree's weight in the ensemble (learning rate, 1/n_trees, DART
    weight), so the ensemble output is ``offset + sum of the reached leaves' values``.
    """

    feature: np.ndarray  # (n_nodes,) int64 split feature, -1 at leaves
    threshold: np.ndarray  # (n_nodes,) float64
    left: np.ndarray  # (n_nodes,) int64 child index, -1 at leaves
    right: np.ndarray  # (n_nodes,) int64
    value: np.ndarray  # (n_nodes, n_outputs) float64, used at leaves
    nan_left: np.ndarray  # (n_nodes,) bool: a missing value (NaN) goes left
    zero_missing: np.ndarray | None = None  # (n_nodes,) bool: |x| <= 1e-35 also goes the NaN way


@dataclass(frozen=True)
class TreeEnsemble:
    """A tree ensemble in the internal form: ``output(x) = offset + sum_t tree_t(x)``."""

    trees: tuple[Tree, ...]
    n_features: int
    offset: np.ndarray  # (n_outputs,)
    strict: bool  # True: x < threshold goes left (xgboost); False: x <= threshold
    input_dtype: type  # inputs are cast to this dtype before comparing (as the library does)
    output_kind: str
    output_names: tuple[str, ...]
    allows_missing: bool
    model_name: str
    feature_names: tuple[str, ...] | None = None
    # The relative precision the library computes and stores the model's outputs in (xgboost:
    # float32 leaves and predictions; the others float64).
    precision: float = float(np.finfo(np.float64).eps)

    @property
    def n_outputs(self) -> int:
        return int(self.offset.shape[0])

    def rounding_level(self) -> float:
        """Mean |m_S| at or below which a component is rounding, not an effect (summed over
        outputs): ``8 * precision * (sum |offset| + sum over trees of max |leaf value|)``.

        That sum bounds |output| anywhere, and an additive model whose leaves or training
        residuals were rounded at ``precision`` of it gets interaction components of that
        order (xgboost on an exactly additive target: about 1e-6 of it, float32; float64
        models: 1e-14 and less). FastPD's own float64 arithmetic adds far less.
        """
        leaves = sum(np.abs(t.value[t.feature < 0]).max(axis=0).sum() for t in self.trees)
        return 8 * self.precision * float(np.abs(self.offset).sum() + leaves)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The ensemble output, (n, n_outputs), by walking every tree (the reference path)."""
        Xc = np.asarray(X).astype(self.input_dtype)
        out = np.tile(self.offset, (Xc.shape[0], 1))
        rows = np.arange(Xc.shape[0])
        for tree in self.trees:
            node = np.zeros(Xc.shape[0], dtype=np.int64)
            while True:
                inner = tree.feature[node] >= 0
                if not inner.any():
                    break
                x = Xc[rows, np.where(inner, tree.feature[node], 0)]
                go_left = goes_left(x, tree.threshold[node], tree.nan_left[node], self.strict)
                if tree.zero_missing is not None:
                    zero = tree.zero_missing[node] & (np.abs(x) <= LGBM_ZERO)
                    go_left = np.where(zero, tree.nan_left[node], go_left)
                child = np.where(go_left, tree.left[node], tree.right[node])
                node = np.where(inner, child, node)
            out += tree.value[node]
        return out


def goes_left(x: np.ndarray, threshold: Any, nan_left: Any, strict: bool) -> np.ndarray:
    """Which values go to the left child: by the comparison, and NaN by its default direction."""
    with np.errstate(invalid="ignore"):
        left = x < threshold if strict else x <= threshold
    nan = np.isnan(x)
    if nan.any():
        left = np.where(nan, nan_left, left)
    return left


# --------------------------------------------------------------------------- output names


def names_from(values: Any) -> tuple[str, ...] | None:
    return None if values is None else tuple(str(v) for v in values)


def model_refusal(expected: str, model: Any) -> InputError:
    """``model: expected ..., got <its type>``: in one line (an estimator's repr, such as
    xgboost's, spans several)."""
    return InputError(f"model: expected {expected}, got {type(model).__name__}", argument="model")


def categorical_refusal(what: str, features: Any, names: Any, declared: bool = False) -> InputError:
    """The refusal of a model with native categorical splits, naming the features they use
    (``declared``: the features the model declares categorical, split on or not)."""
    names = [] if names is None else list(names)
    shown = [names[j] if j < len(names) else f"x{j}" for j in sorted(set(int(f) for f in features))]
    expected, got = (
        ("categorical features", "categorical_features")
        if declared
        else ("categorical splits", "categorical splits on")
    )
    return InputError(
        f"model: expected {what} model without {expected}, got {got} "
        f"{', '.join(shown)}; one-hot encode such features (a Pipeline) to explain the model",
        argument="model",
    )


def boosting_outputs(wrapper: Any, n_out: int, kind: str = "prediction") -> tuple[str, ...]:
    """Output names of a boosting model: its classes when it knows them (a scikit-learn style
    wrapper), else names from what its raw margin means ("raw score" when it is not the
    prediction: a log link, reg_sqrt, a bare classifier Booster)."""
    classes = getattr(wrapper, "classes_", None)
    if classes is None:
        if n_out > 1:
            return tuple(f"output {k}" for k in range(n_out))
        return ("prediction",) if kind == "prediction" else ("raw score",)
    if n_out == 1:
        return (str(classes[-1]),)
    return names_from(classes)


_IDENTITY_OBJECTIVES = (
    "reg:squarederror",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "reg:quantileerror",
    "regression",
    "regression_l1",
    "huber",
    "fair",
    "quantile",
    "mape",
)
_LOG_OBJECTIVES = ("count:poisson", "reg:gamma", "reg:tweedie", "poisson", "gamma", "tweedie")
_LOGIT_OBJECTIVES = ("binary:logistic", "binary:logitraw", "reg:logistic", "binary", "xentropy")


def objective_kind(objective: str) -> str:
    """What a boosting library's raw margin means, from its objective name."""
    if objective in _IDENTITY_OBJECTIVES:
        return "prediction"
    if objective in _LOG_OBJECTIVES:
        return "raw score (log of the prediction)"
    if objective in _LOGIT_OBJECTIVES or objective == "cross_entropy":
        return "log-odds"
    if objective.startswith("multi"):
        return "raw score (softmax logit)" if "ova" not in objective else "log-odds (one vs all)"
    return f"raw margin ({objective})"

"""Adapters: every supported tree model becomes one internal array form, :class:`TreeEnsemble`.

A tree is a set of flat arrays (split feature, threshold, children, leaf values, where a missing
value goes); an ensemble is its trees, a constant offset per output, the comparison convention
(``x < t`` or ``x <= t`` goes left) and the dtype inputs are cast to before comparing. FastPD only
ever sees this form, so supporting a new library means writing one adapter here.

What each model's output is (the quantity FastPD decomposes):

- scikit-learn regressors (DecisionTree, RandomForest, ExtraTrees, GradientBoosting): ``predict``;
  HistGradientBoostingRegressor: the raw score (``predict`` for the identity-link losses, its log
  for ``loss="poisson"`` / ``"gamma"``).
- DecisionTree / RandomForest / ExtraTrees classifiers: ``predict_proba``, one output per class
  (the trees average probabilities, so the probability is exactly additive over trees).
- Boosting classifiers (GradientBoosting, HistGradientBoosting, XGBClassifier, LGBMClassifier):
  the raw margin (``decision_function`` / ``output_margin`` / ``raw_score``): the log-odds of the
  positive class when binary (one output), one softmax logit per class otherwise.
- xgboost and LightGBM models: the raw margin, which is the prediction for identity-link
  regression objectives and its log for poisson, gamma and tweedie. LightGBM random-forest mode
  averages its trees; so does the decomposed output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from trustlab.errors import BackendError, ConfigError, InputError

__all__ = [
    "Tree",
    "TreeEnsemble",
    "SUPPORTED_MODELS",
    "as_tree_ensemble",
    "calibrate",
    "model_raw_output",
]

SUPPORTED_MODELS = (
    "scikit-learn DecisionTreeRegressor/Classifier, RandomForestRegressor/Classifier, "
    "ExtraTreesRegressor/Classifier, GradientBoostingRegressor/Classifier, "
    "HistGradientBoostingRegressor/Classifier; xgboost Booster, XGBRegressor, XGBClassifier, "
    "XGBRFRegressor, XGBRFClassifier; lightgbm Booster, LGBMRegressor, LGBMClassifier"
)

# LightGBM treats |x| <= this as zero (kZeroThreshold in its sources).
_LGBM_ZERO = 1e-35
_EPS32 = float(np.finfo(np.float32).eps)


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

    @property
    def n_outputs(self) -> int:
        return int(self.offset.shape[0])

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
                    zero = tree.zero_missing[node] & (np.abs(x) <= _LGBM_ZERO)
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


def as_tree_ensemble(model: Any) -> TreeEnsemble:
    """Convert a fitted tree model to the internal form, with a provisional zero offset.

    Call :func:`calibrate` next: it measures the constant offset and checks the conversion.
    """
    return _convert(model)


def calibrate(model: Any, ensemble: TreeEnsemble, probe: np.ndarray) -> TreeEnsemble:
    """Fix the constant offset from ``probe`` rows and check the ensemble against the model.

    The offset (init estimator, base score, baseline) is the one constant in which libraries
    differ most, so for boosting models it is measured as the model's raw output minus the sum of
    the trees. That difference must be the same on every row (for forests: zero), which checks
    the whole adapter against the model's own prediction.
    """
    measure_offset = _keeps_constant_apart(model)
    probe = np.asarray(probe, dtype=np.float64)
    raw = model_raw_output(model, probe)
    zero = replace(ensemble, offset=np.zeros(ensemble.n_outputs))
    diff = raw - zero.predict(probe)
    offset = diff.mean(axis=0) if measure_offset else np.zeros(ensemble.n_outputs)
    scale = 1.0 + float(np.abs(raw).max(initial=0.0))
    if _is_xgboost(model):
        tol = 8 * _EPS32 * (len(ensemble.trees) + 1) * scale  # xgboost sums in float32
    else:
        tol = 1e-9 * (len(ensemble.trees) + 1) * scale
    spread = float(np.abs(diff - offset).max(initial=0.0))
    if spread > tol:
        raise BackendError(
            f"the tree form of {ensemble.model_name} disagrees with the model's own output by "
            f"{spread:.3g} (tolerance {tol:.3g}); this model configuration is not supported"
        )
    return replace(ensemble, offset=np.asarray(offset, dtype=np.float64))


def _keeps_constant_apart(model: Any) -> bool:
    """Whether the model keeps a constant apart from its trees (boosting: init, base score)."""
    name = type(model).__name__
    forest = name in _SKLEARN_FORESTS or name.startswith("DecisionTree")
    return not (type(model).__module__.startswith("sklearn.") and forest)


def model_raw_output(model: Any, X: np.ndarray) -> np.ndarray:
    """The quantity FastPD decomposes, from the model's own prediction API, as (n, n_outputs)."""
    module = type(model).__module__
    names = getattr(model, "feature_names_in_", None)
    if names is not None:  # fitted on a data frame: predict on one, without warnings
        import pandas as pd

        X = pd.DataFrame(X, columns=list(names))
    if module.startswith("xgboost"):
        import xgboost as xgb

        booster, wrapper = _xgb_booster(model)
        if wrapper is None:
            out = booster.predict(
                xgb.DMatrix(X, feature_names=booster.feature_names), output_margin=True
            )
        else:
            out = wrapper.predict(X, output_margin=True)
    elif module.startswith("lightgbm"):
        booster = model.booster_ if hasattr(model, "booster_") else model
        out = booster.predict(X, raw_score=True)
        dump = booster.dump_model()
        if dump.get("average_output"):  # random-forest mode: the raw score is the trees' sum
            out = out / (len(dump["tree_info"]) // int(dump["num_tree_per_iteration"]))
    else:
        out = _sklearn_raw_output(model, X)
    out = np.asarray(out, dtype=np.float64)
    return out.reshape(out.shape[0], -1)


def _sklearn_raw_output(model: Any, X: np.ndarray) -> np.ndarray:
    name = type(model).__name__
    if name.startswith("HistGradientBoosting") and name.endswith("Regressor"):
        pred = model.predict(X)
        return np.log(pred) if model.loss in ("poisson", "gamma") else pred
    if name in ("GradientBoostingClassifier", "HistGradientBoostingClassifier"):
        return model.decision_function(X)
    if name.endswith("Classifier"):
        return model.predict_proba(X)
    return model.predict(X)


# --------------------------------------------------------------------------- dispatch


def _convert(model: Any) -> TreeEnsemble:
    if hasattr(model, "steps") and hasattr(model, "named_steps"):
        raise InputError(
            "model: expected a fitted tree model, got a Pipeline; explain its last step on "
            "transformed data: FastPD(pipe[-1], pipe[:-1].transform(X_background))",
            argument="model",
        )
    module = type(model).__module__
    name = type(model).__name__
    if module.startswith("xgboost"):
        return _from_xgboost(model)
    if module.startswith("lightgbm"):
        return _from_lightgbm(model)
    if module.startswith("sklearn."):
        _require_fitted(model)
        if name in _SKLEARN_FORESTS or name.startswith("DecisionTree"):
            return _from_sklearn_forest(model)
        if name in ("GradientBoostingRegressor", "GradientBoostingClassifier"):
            return _from_sklearn_gb(model)
        if name in ("HistGradientBoostingRegressor", "HistGradientBoostingClassifier"):
            return _from_sklearn_hgb(model)
    raise InputError.bad("model", f"a fitted tree model: one of {SUPPORTED_MODELS}", model)


_SKLEARN_FORESTS = (
    "RandomForestRegressor",
    "RandomForestClassifier",
    "ExtraTreesRegressor",
    "ExtraTreesClassifier",
)


def _require_fitted(model: Any) -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except NotFittedError:
        raise InputError.bad("model", "a fitted model", model) from None


def _names_from(values: Any) -> tuple[str, ...] | None:
    return None if values is None else tuple(str(v) for v in values)


def _allow_nan(model: Any) -> bool:
    try:
        return bool(model.__sklearn_tags__().input_tags.allow_nan)
    except AttributeError:  # older scikit-learn: trees without the tag reject NaN
        return False


# --------------------------------------------------------------------------- scikit-learn


def _sklearn_tree(
    tree: Any, weight: float, n_outputs: int, column: int | None, proba: bool
) -> Tree:
    t = tree.tree_
    leaf = t.children_left < 0
    if proba:
        value = t.value[:, 0, :].astype(np.float64)
        norm = value.sum(axis=1, keepdims=True)
        norm[norm == 0.0] = 1.0  # as DecisionTreeClassifier.predict_proba
        value = value / norm
    else:
        value = t.value[:, :, 0].astype(np.float64)
    if column is not None:  # a boosting tree feeds one output (class) only
        full = np.zeros((t.node_count, n_outputs))
        full[:, column] = value[:, 0]
        value = full
    missing_left = getattr(t, "missing_go_to_left", np.zeros(t.node_count, dtype=np.uint8))
    return Tree(
        feature=np.where(leaf, -1, t.feature).astype(np.int64),
        threshold=t.threshold.astype(np.float64),
        left=np.where(leaf, -1, t.children_left).astype(np.int64),
        right=np.where(leaf, -1, t.children_right).astype(np.int64),
        value=value * weight,
        nan_left=np.asarray(missing_left, dtype=bool),
    )


def _from_sklearn_forest(model: Any) -> TreeEnsemble:
    name = type(model).__name__
    is_clf = name.endswith("Classifier")
    estimators = list(getattr(model, "estimators_", [model]))
    if is_clf and int(np.atleast_1d(model.n_outputs_)[0]) != 1:
        raise InputError.bad("model", "a single-output classifier", model)
    weight = 1.0 / len(estimators)
    if is_clf:
        outputs = _names_from(model.classes_)
        kind = "probability"
    else:
        n_out = int(model.n_outputs_)
        outputs = ("prediction",) if n_out == 1 else tuple(f"y{k}" for k in range(n_out))
        kind = "prediction"
    trees = tuple(_sklearn_tree(e, weight, len(outputs), None, is_clf) for e in estimators)
    return TreeEnsemble(
        trees=trees,
        n_features=int(model.n_features_in_),
        offset=np.zeros(len(outputs)),
        strict=False,
        input_dtype=np.float32,
        output_kind=kind,
        output_names=outputs,
        allows_missing=_allow_nan(model),
        model_name=name,
        feature_names=_names_from(getattr(model, "feature_names_in_", None)),
    )


def _from_sklearn_gb(model: Any) -> TreeEnsemble:
    from sklearn.dummy import DummyClassifier, DummyRegressor

    name = type(model).__name__
    init = model.init_
    if not (isinstance(init, str) and init == "zero") and not isinstance(
        init, (DummyClassifier, DummyRegressor)
    ):
        raise InputError.bad(
            "model", "gradient boosting whose init is a constant (the default, or 'zero')", init
        )
    n_out = model.estimators_.shape[1]
    trees = tuple(
        _sklearn_tree(model.estimators_[i, k], model.learning_rate, n_out, k, False)
        for i in range(model.estimators_.shape[0])
        for k in range(n_out)
    )
    return TreeEnsemble(
        trees=trees,
        n_features=int(model.n_features_in_),
        offset=np.zeros(n_out),  # measured from the model (its init's raw prediction)
        strict=False,
        input_dtype=np.float32,
        output_kind=_boosting_kind(name, n_out),
        output_names=_boosting_outputs(model, n_out),
        allows_missing=_allow_nan(model),
        model_name=name,
        feature_names=_names_from(getattr(model, "feature_names_in_", None)),
    )


def _boosting_kind(name: str, n_out: int) -> str:
    if not name.endswith("Classifier"):
        return "prediction"
    return "log-odds" if n_out == 1 else "raw score (softmax logit)"


def _boosting_outputs(model: Any, n_out: int) -> tuple[str, ...]:
    classes = getattr(model, "classes_", None)
    if classes is None:
        return ("prediction",) if n_out == 1 else tuple(f"output {k}" for k in range(n_out))
    if n_out == 1:
        return (str(classes[-1]),)
    return _names_from(classes)


def _from_sklearn_hgb(model: Any) -> TreeEnsemble:
    name = type(model).__name__
    is_cat = getattr(model, "is_categorical_", None)
    if is_cat is not None and np.any(is_cat):
        raise InputError.bad(
            "model", "a HistGradientBoosting model without categorical splits", model
        )
    n_out = int(model.n_trees_per_iteration_)
    trees = []
    for predictors in model._predictors:  # the fitted trees; no public accessor exists
        for k, predictor in enumerate(predictors):
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            value = np.zeros((len(nodes), n_out))
            value[:, k] = nodes["value"]
            trees.append(
                Tree(
                    feature=np.where(leaf, -1, nodes["feature_idx"]).astype(np.int64),
                    threshold=nodes["num_threshold"].astype(np.float64),
                    left=np.where(leaf, -1, nodes["left"]).astype(np.int64),
                    right=np.where(leaf, -1, nodes["right"]).astype(np.int64),
                    value=value,
                    nan_left=nodes["missing_go_to_left"].astype(bool),
                )
            )
    kind = _boosting_kind(name, n_out)
    if name.endswith("Regressor") and model.loss in ("poisson", "gamma"):
        kind = "raw score (log of the prediction)"
    return TreeEnsemble(
        trees=tuple(trees),
        n_features=int(model.n_features_in_),
        offset=np.zeros(n_out),
        strict=False,
        input_dtype=np.float64,
        output_kind=kind,
        output_names=_boosting_outputs(model, n_out),
        allows_missing=True,
        model_name=name,
        feature_names=_names_from(getattr(model, "feature_names_in_", None)),
    )


# --------------------------------------------------------------------------- xgboost


def _is_xgboost(model: Any) -> bool:
    return type(model).__module__.startswith("xgboost")


def _xgb_booster(model: Any) -> tuple[Any, Any]:
    """The Booster that ``model.predict`` uses (the best iteration after early stopping)."""
    import xgboost as xgb

    if isinstance(model, xgb.Booster):
        return model, None
    if not hasattr(model, "get_booster"):
        raise InputError.bad("model", f"a fitted tree model: one of {SUPPORTED_MODELS}", model)
    from sklearn.exceptions import NotFittedError

    try:
        booster = model.get_booster()
    except (xgb.core.XGBoostError, NotFittedError):
        raise InputError.bad("model", "a fitted model", model) from None
    try:
        best = model.best_iteration
    except AttributeError:
        best = None
    if best is not None and best + 1 < booster.num_boosted_rounds():
        booster = booster[: best + 1]
    return booster, model


def _from_xgboost(model: Any) -> TreeEnsemble:
    booster, wrapper = _xgb_booster(model)
    if wrapper is not None:
        missing = getattr(wrapper, "missing", np.nan)
        if missing is not None and not np.isnan(missing):
            raise InputError.bad("model", "an xgboost model whose missing value is NaN", missing)
    learner = json.loads(booster.save_raw(raw_format="json"))["learner"]
    gb = learner["gradient_booster"]
    if gb["name"] == "gblinear":
        raise InputError.bad("model", "a tree booster (gbtree or dart)", "a gblinear booster")
    weights = None
    if gb["name"] == "dart":
        weights = [float(w) for w in gb["weight_drop"]]
        gb = gb["gbtree"]
    params = learner["learner_model_param"]
    n_out = max(int(params.get("num_class", "0")), int(params.get("num_target", "1")), 1)
    model_json = gb["model"]
    trees = []
    for i, t in enumerate(model_json["trees"]):
        if int(t["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise InputError.bad("model", "one output per tree (not multi_output_tree)", model)
        if any(int(s) != 0 for s in t["split_type"]):
            raise InputError.bad("model", "an xgboost model without categorical splits", model)
        weight = 1.0 if weights is None else weights[i]
        trees.append(_xgb_tree(t, int(model_json["tree_info"][i]), n_out, weight))
    name = type(model).__name__
    names = booster.feature_names
    kind = _objective_kind(learner["objective"]["name"])
    return TreeEnsemble(
        trees=tuple(trees),
        n_features=int(booster.num_features()),
        offset=np.zeros(n_out),  # the base score, measured in margin space
        strict=True,
        input_dtype=np.float32,
        output_kind=kind,
        output_names=(
            _boosting_outputs(wrapper, n_out)
            if wrapper is not None
            else _booster_outputs(kind, n_out)
        ),
        allows_missing=True,
        model_name=f"xgboost {name}",
        feature_names=None if names is None else tuple(names),
    )


def _booster_outputs(kind: str, n_out: int) -> tuple[str, ...]:
    """Output names for a bare Booster, which knows no class labels."""
    if n_out == 1:
        return ("prediction",) if kind == "prediction" else ("raw score",)
    return tuple(f"output {k}" for k in range(n_out))


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


def _objective_kind(objective: str) -> str:
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


def _xgb_tree(t: dict, column: int, n_out: int, weight: float) -> Tree:
    left = np.asarray(t["left_children"], dtype=np.int64)
    right = np.asarray(t["right_children"], dtype=np.int64)
    leaf = left < 0
    cond = np.asarray(t["split_conditions"], dtype=np.float32).astype(np.float64)
    value = np.zeros((len(left), n_out))
    value[:, column] = np.where(leaf, cond, 0.0) * weight
    return Tree(
        feature=np.where(leaf, -1, np.asarray(t["split_indices"], dtype=np.int64)),
        threshold=np.where(leaf, 0.0, cond),
        left=np.where(leaf, -1, left),
        right=np.where(leaf, -1, right),
        value=value,
        nan_left=np.asarray(t["default_left"], dtype=bool),
    )


# --------------------------------------------------------------------------- LightGBM


def _from_lightgbm(model: Any) -> TreeEnsemble:
    try:
        import lightgbm as lgb
    except ImportError:  # pragma: no cover - the model could not exist without it
        raise ConfigError.missing_extra("lightgbm", "trees") from None
    if isinstance(model, lgb.Booster):
        booster, wrapper = model, None
    else:
        try:
            booster, wrapper = model.booster_, model
        except (AttributeError, lgb.basic.LightGBMError):
            raise InputError.bad("model", "a fitted model", model) from None
    dump = booster.dump_model()
    n_out = int(dump["num_tree_per_iteration"])
    infos = dump["tree_info"]
    weight = 1.0 / (len(infos) // n_out) if dump.get("average_output") else 1.0
    trees = tuple(_lgbm_tree(info, i % n_out, n_out, weight) for i, info in enumerate(infos))
    names = tuple(dump.get("feature_names", ()))
    if all(n == f"Column_{i}" for i, n in enumerate(names)):
        names = ()  # LightGBM's placeholders, not real names
    kind = _objective_kind(str(dump.get("objective", "")).split(" ")[0])
    return TreeEnsemble(
        trees=trees,
        n_features=int(dump["max_feature_idx"]) + 1,
        offset=np.zeros(n_out),
        strict=False,
        input_dtype=np.float64,
        output_kind=kind,
        output_names=(
            _boosting_outputs(wrapper, n_out)
            if wrapper is not None
            else _booster_outputs(kind, n_out)
        ),
        allows_missing=True,
        model_name=f"lightgbm {type(model).__name__}",
        feature_names=names or None,
    )


def _lgbm_tree(info: dict, column: int, n_out: int, weight: float) -> Tree:
    """Flatten LightGBM's nested dump; missing types become NaN/zero routing per node."""
    feature, threshold, left, right, leaf_value, nan_left, zero_missing = ([] for _ in range(7))

    def visit(node: dict) -> int:
        index = len(feature)
        for column_list in (feature, threshold, left, right, leaf_value, nan_left, zero_missing):
            column_list.append(None)
        if "leaf_value" in node:
            if "leaf_coeff" in node or "leaf_features" in node:
                raise InputError.bad(
                    "model", "a LightGBM model without linear trees", "linear_tree"
                )
            feature[index], threshold[index], left[index], right[index] = -1, 0.0, -1, -1
            leaf_value[index], nan_left[index], zero_missing[index] = (
                node["leaf_value"],
                False,
                False,
            )
            return index
        if node["decision_type"] != "<=":
            raise InputError.bad("model", "a LightGBM model without categorical splits", "'=='")
        thr = float(node["threshold"])
        missing_type = node["missing_type"]
        default_left = bool(node["default_left"])
        feature[index], threshold[index], leaf_value[index] = int(node["split_feature"]), thr, 0.0
        # "None": NaN is read as 0.0; "Zero": zero and NaN take the default side; "NaN": NaN does.
        nan_left[index] = (0.0 <= thr) if missing_type == "None" else default_left
        zero_missing[index] = missing_type == "Zero"
        left[index] = visit(node["left_child"])
        right[index] = visit(node["right_child"])
        return index

    visit(info["tree_structure"])
    value = np.zeros((len(feature), n_out))
    value[:, column] = np.asarray(leaf_value, dtype=np.float64) * weight
    zero = np.asarray(zero_missing, dtype=bool)
    return Tree(
        feature=np.asarray(feature, dtype=np.int64),
        threshold=np.asarray(threshold, dtype=np.float64),
        left=np.asarray(left, dtype=np.int64),
        right=np.asarray(right, dtype=np.int64),
        value=value,
        nan_left=np.asarray(nan_left, dtype=bool),
        zero_missing=zero if zero.any() else None,
    )

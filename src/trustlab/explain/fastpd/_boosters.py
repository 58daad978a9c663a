"""Adapters from xgboost and LightGBM models to the internal form (:mod:`._ensemble`).

What is decomposed is the raw margin (``output_margin`` / ``raw_score``): the prediction for
identity-link regression objectives, its log for poisson, gamma and tweedie, the log-odds or the
softmax logits for classifiers. LightGBM random-forest mode averages its trees; so does the
decomposed output.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.explain.fastpd._ensemble import (
    SUPPORTED_MODELS,
    Tree,
    TreeEnsemble,
    boosting_outputs,
    categorical_refusal,
    model_refusal,
    objective_kind,
)

__all__ = ["is_xgboost", "from_xgboost", "from_lightgbm", "booster_raw_output"]


def is_xgboost(model: Any) -> bool:
    return type(model).__module__.startswith("xgboost")


def booster_raw_output(model: Any, X: Any) -> np.ndarray:
    """The raw margin of an xgboost or LightGBM model, from the library itself."""
    if is_xgboost(model):
        import xgboost as xgb

        booster, wrapper = _xgb_booster(model)
        if wrapper is None:
            return booster.predict(
                xgb.DMatrix(X, feature_names=booster.feature_names), output_margin=True
            )
        return wrapper.predict(X, output_margin=True)
    booster = model.booster_ if hasattr(model, "booster_") else model
    out = booster.predict(X, raw_score=True)
    dump = booster.dump_model()
    if dump.get("average_output"):  # random-forest mode: the raw score is the trees' sum
        out = out / (len(dump["tree_info"]) // int(dump["num_tree_per_iteration"]))
    return out


def _boosted(trees, n_out: int, kind: str, wrapper: Any, **form: Any) -> TreeEnsemble:
    """The parts both libraries share: a measured offset, NaN routing, names from the wrapper."""
    return TreeEnsemble(
        trees=tuple(trees),
        offset=np.zeros(n_out),  # the base score, measured in margin space
        output_kind=kind,
        output_names=boosting_outputs(wrapper, n_out, kind),
        allows_missing=True,
        **form,
    )


# --------------------------------------------------------------------------- xgboost


def _xgb_booster(model: Any) -> tuple[Any, Any]:
    """The Booster that ``model.predict`` uses (the best iteration after early stopping)."""
    import xgboost as xgb

    if isinstance(model, xgb.Booster):
        return model, None
    if not hasattr(model, "get_booster"):
        raise model_refusal(f"a fitted tree model: one of {SUPPORTED_MODELS}", model)
    from sklearn.exceptions import NotFittedError

    try:
        booster = model.get_booster()
    except (xgb.core.XGBoostError, NotFittedError):
        raise model_refusal("a fitted model", model) from None
    try:
        best = model.best_iteration
    except AttributeError:
        best = None
    if best is not None and best + 1 < booster.num_boosted_rounds():
        booster = booster[: best + 1]
    return booster, model


def from_xgboost(model: Any) -> TreeEnsemble:
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
    categorical = [
        f
        for t in model_json["trees"]
        for f, kind in zip(t["split_indices"], t["split_type"], strict=True)
        if int(kind) != 0
    ]
    if categorical:
        raise categorical_refusal("an xgboost", categorical, booster.feature_names)
    trees = []
    for i, t in enumerate(model_json["trees"]):
        if int(t["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise InputError.bad(
                "model", "one output per tree (not multi_output_tree)", "multi_output_tree"
            )
        weight = 1.0 if weights is None else weights[i]
        trees.append(_xgb_tree(t, int(model_json["tree_info"][i]), n_out, weight))
    names = booster.feature_names
    return _boosted(
        trees,
        n_out,
        objective_kind(learner["objective"]["name"]),
        wrapper,
        n_features=int(booster.num_features()),
        strict=True,
        input_dtype=np.float32,
        precision=float(np.finfo(np.float32).eps),  # its leaves and predictions are float32
        model_name=f"xgboost {type(model).__name__}",
        feature_names=None if names is None else tuple(names),
    )


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


def from_lightgbm(model: Any) -> TreeEnsemble:
    lgb = require("lightgbm", "trees")
    if isinstance(model, lgb.Booster):
        booster, wrapper = model, None
    else:
        try:
            booster, wrapper = model.booster_, model
        except (AttributeError, lgb.basic.LightGBMError):
            raise model_refusal("a fitted model", model) from None
    dump = booster.dump_model()
    n_out = int(dump["num_tree_per_iteration"])
    infos = dump["tree_info"]
    categorical = [f for info in infos for f in _lgbm_categorical(info["tree_structure"])]
    if categorical:
        raise categorical_refusal("a LightGBM", categorical, dump.get("feature_names"))
    weight = 1.0 / (len(infos) // n_out) if dump.get("average_output") else 1.0
    trees = [_lgbm_tree(info, i % n_out, n_out, weight) for i, info in enumerate(infos)]
    names = tuple(dump.get("feature_names", ()))
    if all(n == f"Column_{i}" for i, n in enumerate(names)):
        names = ()  # LightGBM's placeholders, not real names
    return _boosted(
        trees,
        n_out,
        _lgbm_kind(str(dump.get("objective", ""))),
        wrapper,
        n_features=int(dump["max_feature_idx"]) + 1,
        strict=False,
        input_dtype=np.float64,
        model_name=f"lightgbm {type(model).__name__}",
        feature_names=names or None,
    )


def _lgbm_kind(objective: str) -> str:
    """What the raw score means; ``binary sigmoid:2`` scores log-odds / 2 (p = sigmoid(2 f)),
    ``regression sqrt`` (``reg_sqrt=True``) the signed square root of the prediction."""
    name, *params = objective.split(" ")
    kind = objective_kind(name)
    sigmoid = next((p.split(":", 1)[1] for p in params if p.startswith("sigmoid:")), "1")
    if kind.startswith("log-odds") and float(sigmoid) != 1.0:
        kind = f"raw score ({kind} divided by sigmoid={float(sigmoid):g})"
    if kind == "prediction" and "sqrt" in params:  # reg_sqrt: prediction = sign(r) r^2
        kind = "raw score (signed square root of the prediction: reg_sqrt)"
    return kind


def _lgbm_categorical(node: dict) -> list[int]:
    """The features of the categorical ('==') splits under a node of LightGBM's dump."""
    if "leaf_value" in node:
        return []
    here = [int(node["split_feature"])] if node["decision_type"] != "<=" else []
    return here + _lgbm_categorical(node["left_child"]) + _lgbm_categorical(node["right_child"])


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

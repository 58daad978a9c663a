"""Adapters from scikit-learn's tree models to the internal form (:mod:`._ensemble`).

What is decomposed: ``predict`` for regressors (DecisionTree, RandomForest, ExtraTrees,
GradientBoosting); HistGradientBoostingRegressor's raw score (``predict`` for the identity-link
losses, its log for ``loss="poisson"`` / ``"gamma"``); ``predict_proba`` for DecisionTree /
RandomForest / ExtraTrees classifiers, one output per class (the trees average probabilities, so
the probability is exactly additive over trees); the raw margin (``decision_function``) for
GradientBoosting and HistGradientBoosting classifiers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab.errors import InputError
from trustlab.explain.fastpd._ensemble import (
    Tree,
    TreeEnsemble,
    boosting_outputs,
    categorical_refusal,
    model_refusal,
    names_from,
)

__all__ = ["FORESTS", "is_forest", "from_sklearn", "sklearn_raw_output"]

FORESTS = (
    "RandomForestRegressor",
    "RandomForestClassifier",
    "ExtraTreesRegressor",
    "ExtraTreesClassifier",
)


def is_forest(name: str) -> bool:
    """Whether a scikit-learn class name is a tree or forest (averaging, no constant apart)."""
    return name in FORESTS or name.startswith("DecisionTree")


def from_sklearn(model: Any) -> TreeEnsemble | None:
    """The internal form of a fitted scikit-learn tree model, or None for other models."""
    name = type(model).__name__
    _require_fitted(model)
    if is_forest(name):
        return _from_forest(model)
    if name in ("GradientBoostingRegressor", "GradientBoostingClassifier"):
        return _from_gradient_boosting(model)
    if name in ("HistGradientBoostingRegressor", "HistGradientBoostingClassifier"):
        return _from_hist_gradient_boosting(model)
    return None


def sklearn_raw_output(model: Any, X: np.ndarray) -> np.ndarray:
    """What is decomposed, from the model's own prediction API."""
    name = type(model).__name__
    if name.startswith("HistGradientBoosting") and name.endswith("Regressor"):
        pred = model.predict(X)
        return np.log(pred) if model.loss in ("poisson", "gamma") else pred
    if name in ("GradientBoostingClassifier", "HistGradientBoostingClassifier"):
        return model.decision_function(X)
    if name.endswith("Classifier"):
        return model.predict_proba(X)
    return model.predict(X)


def _require_fitted(model: Any) -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except NotFittedError:
        raise model_refusal("a fitted model", model) from None


def _allow_nan(model: Any) -> bool:
    try:
        return bool(model.__sklearn_tags__().input_tags.allow_nan)
    except AttributeError:  # older scikit-learn: trees without the tag reject NaN
        return False


def _ensemble(model: Any, trees, n_out: int, **form: Any) -> TreeEnsemble:
    """The parts every scikit-learn ensemble shares: features, zero offset, x <= t goes left."""
    return TreeEnsemble(
        trees=tuple(trees),
        n_features=int(model.n_features_in_),
        offset=np.zeros(n_out),  # boosting: measured from the model (its init's raw prediction)
        strict=False,
        model_name=type(model).__name__,
        feature_names=names_from(getattr(model, "feature_names_in_", None)),
        **form,
    )


def _tree(tree: Any, weight: float, n_outputs: int, column: int | None, proba: bool) -> Tree:
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


def _from_forest(model: Any) -> TreeEnsemble:
    name = type(model).__name__
    is_clf = name.endswith("Classifier")
    estimators = list(getattr(model, "estimators_", [model]))
    if is_clf and int(np.atleast_1d(model.n_outputs_)[0]) != 1:
        raise model_refusal("a single-output classifier", model)
    weight = 1.0 / len(estimators)
    if is_clf:
        outputs = names_from(model.classes_)
        kind = "probability"
    else:
        n_out = int(model.n_outputs_)
        outputs = ("prediction",) if n_out == 1 else tuple(f"y{k}" for k in range(n_out))
        kind = "prediction"
    trees = [_tree(e, weight, len(outputs), None, is_clf) for e in estimators]
    return _ensemble(
        model,
        trees,
        len(outputs),
        input_dtype=np.float32,
        output_kind=kind,
        output_names=outputs,
        allows_missing=_allow_nan(model),
    )


def _boosting_kind(name: str, n_out: int) -> str:
    if not name.endswith("Classifier"):
        return "prediction"
    return "log-odds" if n_out == 1 else "raw score (softmax logit)"


def _from_gradient_boosting(model: Any) -> TreeEnsemble:
    from sklearn.dummy import DummyClassifier, DummyRegressor

    init = model.init_
    if not (isinstance(init, str) and init == "zero") and not isinstance(
        init, (DummyClassifier, DummyRegressor)
    ):
        raise InputError.bad(
            "model", "gradient boosting whose init is a constant (the default, or 'zero')", init
        )
    n_out = model.estimators_.shape[1]
    trees = [
        _tree(model.estimators_[i, k], model.learning_rate, n_out, k, False)
        for i in range(model.estimators_.shape[0])
        for k in range(n_out)
    ]
    kind = _boosting_kind(type(model).__name__, n_out)
    if kind == "log-odds" and model.loss == "exponential":  # P(positive) = sigmoid(2 f)
        kind = "raw score (half the log-odds: exponential loss)"
    return _ensemble(
        model,
        trees,
        n_out,
        input_dtype=np.float32,
        output_kind=kind,
        output_names=boosting_outputs(model, n_out),
        allows_missing=_allow_nan(model),
    )


def _from_hist_gradient_boosting(model: Any) -> TreeEnsemble:
    name = type(model).__name__
    is_cat = getattr(model, "is_categorical_", None)
    if is_cat is not None and np.any(is_cat):
        # Refused even when no tree splits on them: the trees then index the columns in the
        # model's own order (its categorical ones first), not the caller's.
        raise categorical_refusal(
            "a HistGradientBoosting",
            np.flatnonzero(is_cat),
            getattr(model, "feature_names_in_", None),
            declared=True,
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
    return _ensemble(
        model,
        trees,
        n_out,
        input_dtype=np.float64,
        output_kind=kind,
        output_names=boosting_outputs(model, n_out, kind),
        allows_missing=True,
    )

"""Every supported tree model becomes one internal form, :class:`TreeEnsemble`.

:func:`as_tree_ensemble` picks the adapter (:mod:`._sklearn_trees`, :mod:`._boosters`);
:func:`calibrate` measures the constant offset and checks the converted ensemble against the
model's own output. Supporting a new library means writing one adapter.

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

from dataclasses import replace
from typing import Any

import numpy as np

from trustlab.errors import BackendError, InputError
from trustlab.explain.fastpd._boosters import (
    booster_raw_output,
    from_lightgbm,
    from_xgboost,
    is_xgboost,
)
from trustlab.explain.fastpd._ensemble import SUPPORTED_MODELS, TreeEnsemble, model_refusal
from trustlab.explain.fastpd._pipeline import is_pipeline
from trustlab.explain.fastpd._sklearn_trees import from_sklearn, is_forest, sklearn_raw_output

__all__ = ["as_tree_ensemble", "calibrate", "model_raw_output"]

_EPS32 = float(np.finfo(np.float32).eps)


def as_tree_ensemble(model: Any) -> TreeEnsemble:
    """Convert a fitted tree model to the internal form, with a provisional zero offset.

    Call :func:`calibrate` next: it measures the constant offset and checks the conversion.
    Raises InputError for a model FastPD does not support.
    """
    if is_pipeline(model):  # FastPD splits a Pipeline first: this is one inside another
        raise InputError(
            "model: expected a fitted tree model or a Pipeline whose last step is one, got a "
            "Pipeline ending in a Pipeline",
            argument="model",
        )
    module = type(model).__module__
    if module.startswith("xgboost"):
        return from_xgboost(model)
    if module.startswith("lightgbm"):
        return from_lightgbm(model)
    if module.startswith("sklearn."):
        ensemble = from_sklearn(model)
        if ensemble is not None:
            return ensemble
    raise model_refusal(f"a fitted tree model: one of {SUPPORTED_MODELS}", model)


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
    if is_xgboost(model):
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
    forest = is_forest(type(model).__name__)
    return not (type(model).__module__.startswith("sklearn.") and forest)


def model_raw_output(model: Any, X: np.ndarray) -> np.ndarray:
    """The quantity FastPD decomposes, from the model's own prediction API, as (n, n_outputs)."""
    module = type(model).__module__
    if module.startswith(("xgboost", "lightgbm")):  # arrays, never a frame: a frame of floats
        out = booster_raw_output(model, X)  # is refused for a category column (never split on)
    else:
        names = getattr(model, "feature_names_in_", None)
        if names is not None:  # fitted on a data frame: predict on one, without warnings
            import pandas as pd

            X = pd.DataFrame(X, columns=list(names))
        out = sklearn_raw_output(model, X)
    out = np.asarray(out, dtype=np.float64)
    return out.reshape(out.shape[0], -1)

"""The ANOVA-TPNN estimator: fitting (with torch), components, predictions and plots (numpy).

Why this module is long: :class:`ANOVATPNN` is one scikit-learn estimator whose public surface
(fit, predict, components, importance, grids, plots, summaries, save/load) shares one fitted
state; the parts that stand alone (encoding, terms, numpy components, the torch network, saving,
results) live in their own modules, and what remains is the estimator's own methods with their
docstrings.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, log_softmax
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import (
    as_1d,
    check_choice,
    check_in_range,
    check_n_jobs,
    check_positive_int,
    check_random_state,
)
from trustlab._lazy import require
from trustlab._model_files import load_training_state
from trustlab._numerics import power_of_2, root_mean_square
from trustlab._progress import check_progress
from trustlab._results import check_output_dir
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn._components import TermGroup
from trustlab.explain.anova_tpnn._encoding import (
    FeatureMap,
    as_frame,
    categorical_flags,
    feature_index,
)
from trustlab.explain.anova_tpnn._saving import read_model, write_model
from trustlab.explain.anova_tpnn._target import (
    as_target,
    encode_target,
    initial_intercept,
    validation_split,
)
from trustlab.explain.anova_tpnn._terms import resolve_terms, screen_pairs, split_component
from trustlab.explain.anova_tpnn.results import (
    ANOVATPNNSummary,
    ComponentFigures,
    ComponentGrid,
    ComponentImportance,
    ComponentValues,
    component_name,
)

__all__ = ["ANOVATPNN"]

# Parameters that say how and where a fit runs, not what it learns: a training state left with
# other values of these is resumed.
_NOT_MODEL_PARAMS = ("checkpoint_dir", "n_jobs")


def _may_classify(model: ANOVATPNN) -> bool:
    """``decision_function`` and ``predict_proba`` exist unless ``task="regression"`` says the
    model is a regressor (as scikit-learn's regressors, which have neither)."""
    return model.task != "regression"


def _check_distinct_names(names: Sequence[str], terms: list[tuple[int, ...]]) -> None:
    """Component names join feature names with " & ": a feature called "a & b" beside a and b
    would name its main effect as the pair of a and b, and only one could be reached by name."""
    seen: dict[str, tuple[int, ...]] = {}
    for term in terms:
        name = component_name([names[j] for j in term])
        if name in seen:
            first, second = ([names[j] for j in t] for t in (seen[name], term))
            raise InputError(
                f"X: expected feature names that keep component names distinct, got {name!r} "
                f"for both the component of {first} and that of {second} (' & ' joins the "
                "features of a component); rename the column",
                argument="X",
            )
        seen[name] = term


class ANOVATPNN(BaseEstimator):
    """ANOVA-TPNN: a glass-box network whose main effects and interactions are unique.

    The prediction is ``intercept + sum of components`` exactly (the logit, or class logits, for
    classification). Each component sums to zero over the training data in each of its
    variables, so the decomposition is the functional ANOVA one under the product of the
    training marginals: refitting with another seed gives the same curves for the components
    that carry signal (weak components, and fits on small tables, still vary by seed).

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
        A plateau is this many epochs without improving the validation loss by 1e-4
        (relative). The first ``n_decays`` plateaus cut the learning rate; the next one stops
        training. The best checkpoint is kept.
    lr_decay : float, default 0.3
        What a plateau multiplies the learning rate by (training goes on from where it is).
        1.0 keeps the rate constant, as the authors do: training then stops at the first
        plateau.
    n_decays : int, default 2
        How many plateaus cut the learning rate before one stops training (0: the first one
        stops it).
    validation_fraction : float, default 0.15
        Rows held out for early stopping (stratified for classification). They still count as
        training data for the quantile transform and the sum-to-zero constants. Small data: when
        the split would leave fewer than 10 validation or 20 training rows (below 61 rows at
        0.15), or a class has a single row, nothing is held out and the plateaus (early stopping,
        learning-rate cuts) and the kept checkpoint follow the loss on all training rows, as
        scikit-learn's MLP does without ``early_stopping``; ``history_["n_validation_rows"]`` is
        then 0.
    n_quantiles : int, default 1000
        Quantiles of the uniform quantile transform (at most the number of rows).
    random_state : None, int or numpy Generator
        Initialisation, split and minibatch order; the same seed gives the same model.
    n_jobs : int or None, default None
        Torch threads while fitting: None keeps torch's own setting (it follows
        ``OMP_NUM_THREADS``), capped at the cores this process may use; an int follows joblib's
        rule (-1 every core). The network is small: one thread is usually as fast as several on
        a shared machine.
    checkpoint_dir : path or None, default None
        Where the training state is saved after every epoch; a fit interrupted (a crash,
        Ctrl-C) resumes from it when refitted with the same folder, data and settings, and ends
        as an uninterrupted fit would (the same model, bit for bit, with the same number of
        torch threads: another ``n_jobs`` resumes too, but float32 sums then round otherwise;
        predictions differed by 4e-8). A state left by a fit of other data or settings
        (``n_jobs`` aside) is refused (InputError naming
        ``checkpoint_dir``); so is one of ``random_state=None`` once rows are held out (each
        fit draws another split): give an int seed to resume. The folder is left in place
        after the fit (a refit with it returns the same model without training); delete it to
        start afresh. Not saved by :meth:`save`.

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
        Per-epoch training and validation losses and learning rates, ``best_epoch``,
        ``n_epochs``, ``n_validation_rows`` (0: no rows held out, the "validation" loss is the
        loss on the training rows), and the fitted model's score on the held-out rows:
        ``validation_metric`` (``"accuracy"`` or ``"rmse"``, in the target's units) and
        ``validation_score`` (None when no rows were held out). The held-out rows chose the
        checkpoint and the learning-rate cuts, so the score is slightly optimistic.
    validation_rows_ : numpy.ndarray
        Positions (in the rows given to ``fit``) of the rows held out for early stopping; empty
        when none were. Not saved by :meth:`save`.
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
    >>> model = ANOVATPNN(max_epochs=30, random_state=0).fit(X, y)
    >>> model.component_names_
    ['x0', 'x1', 'x0 & x1']
    >>> parts = model.components(X)
    >>> bool(np.allclose(parts.total(), model.predict(X)))
    True
    >>> bool(abs(parts["x0"].mean()) < 1e-9)  # a main effect has mean zero on the data
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
        lr_decay=0.3,
        n_decays=2,
        validation_fraction=0.15,
        n_quantiles=1000,
        random_state=None,
        n_jobs=None,
        checkpoint_dir=None,
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
        self.lr_decay = lr_decay
        self.n_decays = n_decays
        self.validation_fraction = validation_fraction
        self.n_quantiles = n_quantiles
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.checkpoint_dir = checkpoint_dir

    def __sklearn_tags__(self):
        """A classifier (multiclass) or a regressor for scikit-learn when ``task`` says which;
        categorical and string features are accepted, sparse input and missing values are not."""
        from sklearn.utils import ClassifierTags, RegressorTags

        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.categorical = tags.input_tags.string = True
        tags.input_tags.sparse = tags.input_tags.allow_nan = False
        if self.task == "classification":
            tags.estimator_type, tags.classifier_tags = "classifier", ClassifierTags()
        elif self.task == "regression":
            tags.estimator_type, tags.regressor_tags = "regressor", RegressorTags()
        return tags

    # ------------------------------------------------------------------ fitting

    def _check_params(self) -> int | None:
        """Check the parameters; returns the number of torch threads (None: torch's own)."""
        check_positive_int(self.order, "order")
        check_positive_int(self.n_basis, "n_basis")
        check_positive_int(self.max_interactions, "max_interactions", minimum=0)
        check_choice(self.task, "task", ("auto", "regression", "classification"))
        check_in_range(self.penalty, "penalty", 0.0, math.inf)
        check_in_range(self.learning_rate, "learning_rate", 0.0, math.inf, low_open=True)
        check_positive_int(self.batch_size, "batch_size")
        check_positive_int(self.max_epochs, "max_epochs")
        check_positive_int(self.patience, "patience")
        check_in_range(self.lr_decay, "lr_decay", 0.0, 1.0, low_open=True)
        check_positive_int(self.n_decays, "n_decays", minimum=0)
        check_in_range(self.validation_fraction, "validation_fraction", 0.0, 0.5, low_open=True)
        check_positive_int(self.n_quantiles, "n_quantiles", minimum=2)
        folder = getattr(self, "checkpoint_dir", None)  # a subclass may not take one
        if folder is not None:
            if not isinstance(folder, str | os.PathLike):
                raise InputError.bad("checkpoint_dir", "a folder path or None", folder)
            check_output_dir(folder, "checkpoint_dir")
        return None if self.n_jobs is None else check_n_jobs(self.n_jobs)

    def fit(self, X, y, *, progress: Callable[[int, int, float], None] | None = None):
        """Fit the model; returns self. A fit that fails or is interrupted once training has
        started leaves the model not fitted (``NotFittedError``), whatever an earlier fit gave.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, d)
            At least 2 rows; no missing values; numeric features must vary. Dense only (a
            scipy sparse matrix is refused).
        y : array-like, shape (n,)
        progress : callable, optional
            Called after each epoch as ``progress(epoch, max_epochs, validation_loss)``, and
            once as ``progress(0, max_epochs, nan)`` when X and y have been checked and the
            components chosen (``component_names_`` is set), before the first epoch: a caller
            can say what the training will be only once the input is known to be good.
        """
        check_progress(progress, "a callable (epoch, max_epochs, validation_loss) or None")
        n_threads = self._check_params()
        rng = check_random_state(self.random_state)
        frame = as_frame(X, min_rows=2)
        target = as_target(y, type(self).__name__)
        if len(target) != len(frame):
            raise InputError.bad("y", f"one value per row of X ({len(frame)})", target)
        features = FeatureMap.fit(
            frame, categorical_flags(frame, self.categorical_features), self.n_quantiles
        )
        task, encoded, classes, shift, scale = encode_target(target, self.task)
        labels = encoded if task != "regression" else None
        train_idx, valid_idx = validation_split(len(frame), self.validation_fraction, labels, rng)
        x_num, x_cat = features.transform(frame)
        terms = resolve_terms(self.order, self.interactions, features.names)
        if terms == "auto":
            terms = self._screen(x_num, x_cat, features, encoded, task, classes, train_idx)
        mains = [(j,) for j in range(len(features.names))]
        terms = mains + sorted(terms, key=len)  # grouped by order, as the network computes them
        _check_distinct_names(features.names, terms)
        # set with the structure: a refit refused before here keeps the fitted model's values
        self._output_shift_, self._output_scale_ = shift, scale
        self._set_structure(features, terms, task, classes, isinstance(X, pd.DataFrame))
        try:
            data = (x_num, x_cat, encoded, train_idx, valid_idx)
            checkpoint = self._checkpoint(data, classes)  # a state of another fit: refused now
            if progress is not None:  # the input is good: training starts
                progress(0, self.max_epochs, math.nan)
            self._train(data, task, classes, rng, n_threads, progress, checkpoint)
            held_out = len(train_idx) < len(frame)
            self.history_["n_validation_rows"] = len(valid_idx) if held_out else 0
            self.validation_rows_ = np.sort(valid_idx) if held_out else np.empty(0, np.int64)
            self._score_held_out(x_num, x_cat, target, encoded)
            self._n_fit, self._fit_digest = len(frame), _rows_digest(frame)
            self.importance_, self._importance_per_class_ = self._importance_values(
                self._component_array(x_num, x_cat)
            )
        except BaseException:  # diverged, interrupted: the new structure has no weights
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)  # not fitted, rather than the old weights on the new map
            raise
        return self

    def _score_held_out(self, x_num, x_cat, target, encoded) -> None:
        """The fitted model's accuracy (classification) or RMSE (regression, in the target's
        units) on the rows held out for early stopping, kept in ``history_``."""
        rows = self.validation_rows_
        self.history_["validation_metric"] = "rmse" if self.task_ == "regression" else "accuracy"
        self.history_["validation_score"] = None
        if len(rows) == 0:
            return
        values = self._component_array(x_num[rows], x_cat[rows])
        decision = self._intercept_array() + values.sum(axis=1)
        if self.task_ == "regression":
            truth = np.asarray(target[rows], dtype=np.float64)
            score = float(root_mean_square(decision[:, 0] - truth))  # no overflow at 1e300
        else:
            codes = decision.argmax(axis=1) if decision.shape[1] > 1 else (decision[:, 0] > 0)
            score = float(np.mean(codes.astype(np.int64) == encoded[rows]))
        self.history_["validation_score"] = score

    def _screen(self, x_num, x_cat, features, encoded, task, classes, train_idx):
        if self.order < 2 or self.max_interactions == 0:
            return []
        if task == "regression":
            target = encoded[:, None]
        else:
            target = (encoded[:, None] == np.arange(len(classes))[None, :]).astype(float)
        return screen_pairs(
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
        self.component_names_ = [component_name(t) for t in self.terms_]

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

    def _make_network(self, groups, order, n_levels, n_outputs):
        """The torch network to train (a subclass may train another kind of network)."""
        from trustlab.explain.anova_tpnn._torch import TPNNNetwork

        return TPNNNetwork(groups, order, n_levels, self.n_basis, n_outputs)

    def _train(self, data, task, classes, rng, n_threads, progress, checkpoint=None) -> None:
        """Train the torch network on ``n_threads`` threads; keep its float64 export.
        ``checkpoint``: ``(folder, fingerprint, state to resume or None)`` or None."""
        require("torch", "torch")
        from trustlab.explain.anova_tpnn import _torch as backend

        x_num, x_cat, encoded, train_idx, valid_idx = data
        n_outputs = len(classes) if task == "multiclass" else 1
        groups, order = self._groups()
        with backend.torch_threads(n_threads):
            network = self._make_network(groups, order, max(1, self._features.n_levels), n_outputs)
            intercept = initial_intercept(encoded, task, n_outputs)
            network.initialize(x_num[train_idx], rng, intercept)
            tensors = backend.make_training_data(
                x_num, x_cat, encoded, train_idx, valid_idx, self._loss
            )
            self.history_ = backend.train_network(
                network,
                tensors,
                loss=self._loss,
                learning_rate=self.learning_rate,
                batch_size=self.batch_size,
                max_epochs=self.max_epochs,
                patience=self.patience,
                penalty=self.penalty,
                rng=rng,
                lr_decay=self.lr_decay,
                n_decays=self.n_decays,
                progress=progress,
                checkpoint=None if checkpoint is None else checkpoint[:2],
                resume=None if checkpoint is None else checkpoint[2],
            )
            self._finalise_network(network, x_num, x_cat, train_idx)

    def _checkpoint(self, data, classes) -> tuple[Path, dict, dict | None] | None:
        """``(checkpoint_dir, fingerprint, the state left there or None)`` for the training loop
        (None without a folder; a state of another fingerprint is refused). The fingerprint is
        a digest of the network's inputs, target, split, feature map (the raw data's quantiles
        and levels) and terms, and of the parameters that define the model (all but
        ``checkpoint_dir`` and ``n_jobs``)."""
        folder = getattr(self, "checkpoint_dir", None)  # a subclass may not take one
        if folder is None:
            return None
        require("torch", "torch")
        import hashlib
        import json

        meta, quantiles = self._features.to_state()  # the raw values' quantiles: the data
        digest = hashlib.sha256()
        for array in [*data, *quantiles.values()]:
            digest.update(np.ascontiguousarray(array).tobytes())
        names = [meta, self.terms_, self._loss]
        names += [
            np.asarray(self._output_shift_).tolist(),
            np.asarray(self._output_scale_).tolist(),
        ]
        names.append(None if classes is None else [str(c) for c in classes])
        digest.update(json.dumps(names, default=str).encode())
        params = {k: v for k, v in self.get_params().items() if k not in _NOT_MODEL_PARAMS}
        text = json.dumps(params, sort_keys=True, default=str)
        fingerprint = {"data": digest.hexdigest(), "params": text}
        return Path(folder), fingerprint, load_training_state(Path(folder), fingerprint)

    def _finalise_network(self, network, x_num, x_cat, train_idx=None) -> None:
        """Float64 numpy parameters: the target's scale folded into beta and the intercept,
        multiclass outputs centred across classes, levels only the held-out rows hold made
        neutral (never trained: their neuron is 0), the sum-to-zero constants recomputed on all
        training rows."""
        exported = network.export()
        intercept = self._output_shift_ + self._output_scale_ * exported["intercept"]
        groups = []
        for arrays in exported["groups"]:
            beta = self._output_scale_ * arrays["beta"]
            if beta.shape[-1] > 1:  # softmax ignores a shift shared by all classes
                beta = beta - beta.mean(axis=-1, keepdims=True)
            group = TermGroup(**{**arrays, "beta": beta})
            if train_idx is not None:
                group = group.with_untrained_levels_neutral(x_cat, train_idx)
            groups.append(group.with_constants(x_num, x_cat))
        if len(intercept) > 1:
            intercept = intercept - intercept.mean()
        self._set_fitted(groups, intercept)

    def _set_fitted(self, groups: list[TermGroup], intercept: np.ndarray) -> None:
        """The fitted components (numpy groups) and the intercept (one per output)."""
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
        frame = as_frame(X)
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
            raise InputError(
                f"X: expected {len(names)} columns, got {frame.shape[1]} (X has {frame.shape[1]} "
                f"features, but {type(self).__name__} is expecting {len(names)} features as "
                "input)",
                argument="X",
            )
        else:
            if isinstance(X, pd.DataFrame) and list(frame.columns) != list(names):
                warnings.warn(  # scikit-learn's words: columns are taken by position
                    f"X has feature names, but {type(self).__name__} was fitted without feature "
                    f"names (its columns {list(frame.columns)} are taken by position as "
                    f"{list(names)})",
                    UserWarning,
                    stacklevel=3,
                )
            elif not isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
                warnings.warn(  # scikit-learn's words: an array's columns are taken by position
                    f"X does not have valid feature names, but {type(self).__name__} was fitted "
                    f"with feature names (its columns are taken by position as {list(names)})",
                    UserWarning,
                    stacklevel=3,
                )
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

    @available_if(_may_classify)
    def decision_function(self, X) -> np.ndarray:
        """``intercept + sum of components``: the logit of the second class (binary), the class
        logits (multiclass, shape (n, n_classes)) or, fitted with ``task="auto"`` on numbers, the
        prediction. Absent with ``task="regression"`` (use ``components(X).total()``)."""
        return self.components(X).total()

    def predict(self, X) -> np.ndarray:
        """Predicted values (regression) or class labels (classification)."""
        return self._predict_from(self.components(X).total())

    @available_if(_may_classify)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n, n_classes), columns in ``classes_`` order (absent with
        ``task="regression"``)."""
        check_is_fitted(self, "terms_")
        if self.task_ != "classification":
            raise InputError.bad("task", "a classifier for predict_proba", "a regression model")
        return self._proba_from(self.components(X).total())

    def _predict_from(self, decision: np.ndarray) -> np.ndarray:
        if self.task_ == "regression":
            return decision
        if decision.ndim == 1:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    @staticmethod
    def _proba_from(decision: np.ndarray) -> np.ndarray:
        if decision.ndim == 1:
            p = expit(decision)
            return np.column_stack([1.0 - p, p])
        return np.exp(log_softmax(decision, axis=1))

    def score(self, X, y) -> float:
        """Accuracy (classification) or R^2 (regression)."""
        from sklearn.metrics import accuracy_score, r2_score

        y = as_1d(y, "y")
        predicted = self.predict(X)
        if len(y) != len(predicted):  # scikit-learn's words named neither y nor X
            raise InputError.bad("y", f"one value per row of X ({len(predicted)})", y)
        if self.task_ == "regression":
            if y.dtype.kind == "c":  # astype would drop the imaginary parts
                raise InputError.bad("y", "real numbers for a regression model", y)
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise InputError.bad("y", "numbers for a regression model", y) from None
            if not np.isfinite(y).all():
                raise InputError.bad("y", "finite numbers for a regression model", y)
            # R^2 has no units: on y and predictions divided by a power of 2 (exact) their
            # squares neither overflow (y ~ 1e300: NaN) nor vanish
            top = max(np.abs(y).max(initial=0), np.abs(predicted).max(initial=0))
            size = float(power_of_2(top))
            return float(r2_score(y / size, predicted / size))
        try:
            return float(accuracy_score(y, predicted))
        except ValueError:  # 'Mix of label input types', 'mix of binary and continuous targets'
            classes = self.classes_.tolist()
            raise InputError.bad("y", f"labels of the model's classes {classes}", y) from None

    def _importance_values(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        per_output = root_mean_square(values, axis=0)  # (C, O); no overflow in the squares
        return root_mean_square(per_output, axis=1), per_output

    def importance(self, X=None) -> ComponentImportance:
        """Each component's root mean square: over the training rows (default) or over X."""
        check_is_fitted(self, "terms_")
        if X is None:
            overall, per_class, n_rows = self.importance_, self._importance_per_class_, self._n_fit
        else:
            x_num, x_cat = self._transform(X)
            overall, per_class = self._importance_values(self._component_array(x_num, x_cat))
            n_rows = len(x_num)
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
        return self._grid(self._component_index(component), n_points)

    def _grid(self, index: int, n_points: int) -> ComponentGrid:
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
        names, given = self._features.names, component  # the error names what was given
        if isinstance(component, str):
            if component in self.component_names_:
                return self.component_names_.index(component)
            component = split_component(component, names)
        elif isinstance(component, (int, np.integer)) and not isinstance(component, bool):
            component = [int(component)]
        if isinstance(component, Sequence):
            try:
                wanted = tuple(sorted(feature_index(c, names, "component") for c in component))
            except InputError:
                wanted = None
            for i, term in enumerate(self._term_indices):
                if wanted is not None and tuple(sorted(term)) == wanted:
                    return i
        raise InputError.bad(
            "component", "one of " + ", ".join(map(repr, self.component_names_)), given
        )

    def component_figures(
        self, components: Sequence[Any], *, target: Any = None, n_points: int = 100
    ) -> ComponentFigures:
        """Chosen components on grids of raw values, to save as one PNG each.

        Parameters
        ----------
        components : sequence
            Feature names or indices (main effects), pairs of them, or component names such as
            ``"age & income"``.
        target : class label, optional
            The class to draw for a multiclass model (checked here, before anything is drawn).
        n_points : int, default 100
            Grid points per main effect (pairs: a third per axis).

        Returns
        -------
        ComponentFigures
        """
        grids = tuple(self.component_grid(component, n_points) for component in components)
        names = [grid.name for grid in grids]
        for name in names:
            if names.count(name) > 1:  # "age" and "age", or ("a", "b") and "b & a"
                raise InputError(
                    f"component: expected each component once, got {name!r} "
                    f"{names.count(name)} times (each would be drawn into its own file)",
                    argument="component",
                )
        for grid in grids:  # before anything is drawn or saved
            if len(grid.features) > 2:
                raise InputError.bad("component", "a main effect or a pair to plot", grid.name)
            grid._class_index(target)
        return ComponentFigures(grids, target)

    def prediction_table(self, X, *, components: bool = False) -> pd.DataFrame:
        """Predictions as a table, one row per row of X.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n, d)
        components : bool, default False
            Also every component's value (``"<name> [<class>]"`` per class for multiclass;
            ``"component:<name>"`` where the name is another column's, such as a feature
            called ``prediction``).

        Returns
        -------
        pandas.DataFrame
            ``prediction``, then ``probability_<class>`` per class for classification; indexed
            as X when X is a DataFrame (so it lines up with X's rows).
        """
        parts = self.components(X)
        decision = parts.total()
        index = X.index if isinstance(X, pd.DataFrame) else None  # rows align with X's
        table = pd.DataFrame({"prediction": self._predict_from(decision)}, index=index)
        if self.task_ == "classification":
            proba = self._proba_from(decision)
            for k, name in enumerate(self.classes_):
                table[f"probability_{name}"] = proba[:, k]
        if components:
            flat = parts.values.reshape(len(table), len(parts.names), -1)
            columns, values = [], []
            for c, name in enumerate(parts.names):
                if flat.shape[2] == 1:
                    columns.append(name)
                    values.append(flat[:, c, 0])
                else:
                    for k, label in enumerate(self.classes_):
                        columns.append(f"{name} [{label}]")
                        values.append(flat[:, c, k])
            taken = {*table.columns, *columns}
            for column, value in zip(columns, values, strict=True):
                if column in table.columns:  # a feature named "prediction": keep the prediction
                    column = f"component:{column}"
                    while column in taken:
                        column = f"component:{column}"
                    taken.add(column)
                table[column] = value
        return table

    def summarize(self, X, y, *, n_points: int = 60, top: int = 6) -> ANOVATPNNSummary:
        """What the fit gave: the training run, the score on X, y and on the rows held out for
        early stopping, the importance and every component on a grid; saving the summary saves
        the model with it.

        Parameters
        ----------
        X, y : the rows to score the model on (usually the training rows; when they are the
            rows given to ``fit``, the held-out rows are named by X's index, else by position)
        n_points : int, default 60
            Grid points per main effect in ``components.json`` (pairs: a third per axis).
        top : int, default 6
            How many of the strongest main effects and pairs get a PNG when saved.

        Returns
        -------
        ANOVATPNNSummary
        """
        check_is_fitted(self, "terms_")
        top = check_positive_int(top, "top", minimum=0)
        n_points = check_positive_int(n_points, "n_points", minimum=2)
        grids = tuple(self._grid(i, n_points) for i in range(len(self.component_names_)))
        frame = as_frame(X)
        score = self.history_.get("validation_score")
        held_out = getattr(self, "validation_rows_", None)
        trained = np.ones(len(frame), dtype=bool)
        y = as_1d(y, "y")
        if len(y) != len(frame):  # the mask below raised numpy's IndexError
            raise InputError.bad("y", f"one value per row of X ({len(frame)})", y)
        # the fit's rows: as many, and the same values (other rows as many, a 50/50 split's
        # test half, were scored less 'the held-out rows' and called the rows it trained on)
        digest = getattr(self, "_fit_digest", None)  # None: a loaded model, or not hashable
        fit_rows = len(frame) == self._n_fit and digest in (None, _rows_digest(frame))
        if held_out is not None and len(held_out) and fit_rows:
            trained[held_out] = False  # the training score is on the rows the weights fitted
            held_out = frame.index.to_numpy()[held_out]  # a DataFrame's own row labels
        else:
            held_out = None
        training_score = self.score(frame.iloc[trained], y[trained])
        return ANOVATPNNSummary(
            n_rows=len(frame),
            task=self.task_,
            classes=getattr(self, "classes_", None),
            n_components=len(self.component_names_),
            training_score=training_score,
            n_training_scored=int(trained.sum()),
            held_out_metric=self.history_.get("validation_metric"),
            held_out_score=None if score is None else float(score),
            n_held_out=int(self.history_.get("n_validation_rows", 0)),
            held_out_rows=held_out,
            importance=self.importance(),
            history=self.history_,
            intercept=self.intercept_,
            grids=grids,
            model=self,
            top=top,
        )

    # ------------------------------------------------------------------ saving

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model into the directory ``path``: ``model.pt`` (tensors, read back with
        ``torch.load(weights_only=True)``) and ``model.json`` (everything else). Returns the
        directory, which :meth:`load` reads."""
        check_is_fitted(self, "terms_")
        return write_model(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ANOVATPNN:
        """Read a model written by :meth:`save` from the directory ``path`` (or from its
        ``model.pt`` / ``model.json``, which name the same model). No pickled code is executed:
        the tensors are read with ``torch.load(weights_only=True)``, the rest is JSON."""
        return read_model(cls, path)


def _rows_digest(frame: pd.DataFrame) -> str | None:
    """A digest of the rows' values (not their index), or None when they cannot be hashed."""
    import hashlib

    try:
        hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    except (TypeError, ValueError):
        return None
    return hashlib.sha1(hashed.tobytes()).hexdigest()

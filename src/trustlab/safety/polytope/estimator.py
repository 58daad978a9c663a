"""The estimator :class:`SafetyPolytope`: facets learned on hidden states, detection, correction,
calibration and storage. The method and its conventions are described in
:mod:`trustlab.safety.polytope`.

Why this module is long: :class:`SafetyPolytope` is one scikit-learn estimator whose public
surface (fit, detection, projection, calibration, facet report, save/load) shares its fitted
state; the heavy parts (input checks, training, projection solvers, reports) live in their own
modules, and what is left is the estimator's methods with their numpydoc docstrings."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import metadata_routing
from sklearn.utils.validation import check_is_fitted

from trustlab._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_in_range,
    check_non_negative,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
)
from trustlab._model_files import read_saved_arrays, read_saved_params, storable_params
from trustlab._numerics import column_mean_scale, standardised
from trustlab._results import json_text, output_dir, replace_saved, to_jsonable
from trustlab.errors import InputError, ResourceError
from trustlab.safety.polytope._inputs import (
    CLASSES,
    as_categories,
    as_unsafe_labels,
    check_activations,
    check_saved_arrays,
)
from trustlab.safety.polytope._train import TrainingSettings, train_polytope
from trustlab.safety.polytope.projection import (
    MAX_ITER,
    NORMS,
    Projection,
    project_concept,
    project_linear_l1,
    project_linear_l2,
    unflagged,
)
from trustlab.safety.polytope.results import FacetReport

__all__ = ["SafetyPolytope"]

ENCODERS = ("linear", "concept")
INITS = ("data", "random")
FORMAT_VERSION = 1
PARAMS_FILE = "polytope.json"
ARRAYS_FILE = "polytope.npz"
_ARRAY_NAMES = ("normals", "offsets", "encoder_weight", "encoder_bias", "mean", "scale")


class SafetyPolytope(ClassifierMixin, BaseEstimator):
    """A learned safety polytope over hidden states: detection, facet explanations, correction.

    Parameters
    ----------
    n_facets : int, default 16
        Number of facets K (constraints). The paper uses 30-50 for 7-8B models.
    encoder : {"linear", "concept"}, default "linear"
        ``"linear"``: facets directly on the standardised activations (the safe set is a convex
        polytope in activation space and the projection is exact). ``"concept"``: facets on the
        features ``relu(W z + beta)`` of a learned one-layer encoder of width ``n_concepts``.
    layer : int or None
        The decoder layer (``trustlab.llm`` convention: the output of layer ``layer``) whose
        states the polytope reads. Stored only; needed on a language model
        (:func:`~trustlab.safety.fit_on_prompts`, :func:`~trustlab.safety.steered_generate`).
    n_concepts : int, default 1024
        Width of the concept encoder (the paper: 16,384).
    margin : float, default 1.0
        Hinge margin M of the loss, in units of standardised facet values.
    unsafe_weight : float, default 2.0
        Weight w_u of the unsafe samples' term.
    concept_l1, facet_l1 : float, default 1e-3
        L1 penalties on the concept features (mean over samples) and on the facet normals.
    facet_l2 : float, default 0.0
        L2 penalty on the facet normals.
    max_epochs, batch_size, learning_rate
        Adam over minibatches (default 40 epochs, batches of 128, learning rate 0.01).
    reassign : bool, default True
        Entropy-driven reassignment of unsafe samples to facets (facet specialisation).
    violation_threshold : float, default 0.0
        A facet counts as violated by a sample in the reassignment when ``c_k`` exceeds this.
    init : {"data", "random"}, default "data"
        Facets start between the safe mean and k-means clusters of the unsafe rows, or random.
    standardize : bool, default True
        Standardise activations with the training mean and standard deviation; ``False`` keeps
        the raw scale (then ``margin`` is in raw units, as in the authors' code).
    random_state : None, int or numpy Generator
        Seeds the initialisation, the minibatch order and the reassignment.

    Attributes
    ----------
    normals_ : ndarray (n_facets, width)
        Facet normals in the encoder space.
    offsets_ : ndarray (n_facets,)
        Facet offsets.
    encoder_weight_, encoder_bias_ : ndarray or None
        The concept encoder (None for the linear encoder).
    mean_, scale_ : ndarray (n_features_in_,)
        The standardisation.
    n_features_in_ : int
    classes_ : ndarray ``[0, 1]``
        0 safe, 1 unsafe: unsafe is the positive class (``classes_[1]``), as ``predict`` says.
    loss_history_ : list of float
        Mean training loss per epoch.
    training_report_ : FacetReport or None
        Facets by category on the training data (when ``categories`` were given to ``fit``).
    calibration_ : dict or None
        After :meth:`calibrate`: the total ``shift`` added to the offsets, the target
        ``max_fpr``, the number of safe states and the share of them flagged (``fpr``).
    metadata_ : dict
        What :meth:`save` was given as ``metadata`` (read back by :meth:`load`); ``fit`` empties
        it, so a refitted polytope is not saved with the metadata of the fit it replaced.

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.safety import SafetyPolytope
    >>> rng = np.random.default_rng(0)
    >>> safe = rng.normal(size=(200, 4))
    >>> unsafe = rng.normal(size=(200, 4)) + np.array([4.0, 0, 0, 0])
    >>> acts = np.vstack([safe, unsafe])
    >>> labels = np.r_[np.zeros(200), np.ones(200)]
    >>> sap = SafetyPolytope(n_facets=2, max_epochs=30, random_state=0).fit(acts, labels)
    >>> bool(sap.is_unsafe([[5.0, 0, 0, 0]])[0]), bool(sap.is_unsafe([[-1.0, 0, 0, 0]])[0])
    (True, False)
    >>> fixed = sap.project([[5.0, 0, 0, 0]])
    >>> bool(fixed.feasible[0]), bool(sap.is_unsafe(fixed.points)[0])
    (True, False)
    """

    def __init__(
        self,
        n_facets: int = 16,
        encoder: str = "linear",
        layer: int | None = None,
        *,
        n_concepts: int = 1024,
        margin: float = 1.0,
        unsafe_weight: float = 2.0,
        concept_l1: float = 1e-3,
        facet_l1: float = 1e-3,
        facet_l2: float = 0.0,
        max_epochs: int = 40,
        batch_size: int = 128,
        learning_rate: float = 1e-2,
        reassign: bool = True,
        violation_threshold: float = 0.0,
        init: str = "data",
        standardize: bool = True,
        random_state: Any = None,
    ):
        self.n_facets = n_facets
        self.encoder = encoder
        self.layer = layer
        self.n_concepts = n_concepts
        self.margin = margin
        self.unsafe_weight = unsafe_weight
        self.concept_l1 = concept_l1
        self.facet_l1 = facet_l1
        self.facet_l2 = facet_l2
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.reassign = reassign
        self.violation_threshold = violation_threshold
        self.init = init
        self.standardize = standardize
        self.random_state = random_state

    # acts and unsafe are the data (scikit-learn's X and y), not metadata to route
    __metadata_request__fit = {"acts": metadata_routing.UNUSED, "unsafe": metadata_routing.UNUSED}
    __metadata_request__predict = {"acts": metadata_routing.UNUSED}
    __metadata_request__decision_function = {"acts": metadata_routing.UNUSED}

    def __sklearn_tags__(self):
        """A binary classifier (1 = unsafe) of dense, finite numeric activations: no sparse
        input, no missing values, no strings. ``unsafe`` must be 0/1 or boolean."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = tags.input_tags.allow_nan = False
        tags.input_tags.string = tags.input_tags.categorical = False
        return tags

    # ------------------------------------------------------------------------------- fitting

    def fit(self, acts: Any, unsafe: Any, categories: Any = None) -> SafetyPolytope:
        """Learn the facets from activations labelled safe (0/False) or unsafe (1/True).

        Parameters
        ----------
        acts : array-like (n, d)
            Hidden states, one row per example.
        unsafe : array-like (n,)
            1/True for unsafe examples, 0/False for safe ones; both must occur (any number of
            rows from 2 on: one of each class). Other label pairs are refused.
        categories : array-like (n,) of str, optional
            A category per example (e.g. the harm area; safe rows may carry "benign"). Only used
            for :attr:`training_report_`.

        Returns
        -------
        SafetyPolytope
            ``self``, fitted.
        """
        settings, rng = self._check_params()
        return self._fit(acts, unsafe, categories, settings, rng)

    def check_params(self) -> SafetyPolytope:
        """Check every parameter as :meth:`fit` does, without data or a model (an InputError
        naming the first bad one); returns ``self``. A caller can check the settings before
        loading a model (``trustlab safety polytope fit`` does).

        >>> SafetyPolytope(n_facets=3).check_params().n_facets
        3
        """
        self._check_params()
        return self

    def _check_params(self) -> tuple[TrainingSettings, np.random.Generator]:
        """Every parameter, checked once before any work (``fit``, ``fit_on_prompts``)."""
        if self.layer is not None:
            check_positive_int(self.layer, "layer", minimum=0)
        check_bool(self.standardize, "standardize")
        settings = TrainingSettings(
            n_facets=check_positive_int(self.n_facets, "n_facets"),
            encoder=check_choice(self.encoder, "encoder", ENCODERS),
            n_concepts=check_positive_int(self.n_concepts, "n_concepts"),
            margin=check_positive(self.margin, "margin"),
            unsafe_weight=check_positive(self.unsafe_weight, "unsafe_weight"),
            concept_l1=check_non_negative(self.concept_l1, "concept_l1"),
            facet_l1=check_non_negative(self.facet_l1, "facet_l1"),
            facet_l2=check_non_negative(self.facet_l2, "facet_l2"),
            max_epochs=check_positive_int(self.max_epochs, "max_epochs"),
            batch_size=check_positive_int(self.batch_size, "batch_size"),
            learning_rate=check_positive(self.learning_rate, "learning_rate"),
            reassign=check_bool(self.reassign, "reassign"),
            violation_threshold=check_in_range(
                self.violation_threshold, "violation_threshold", -math.inf, math.inf
            ),
            init=check_choice(self.init, "init", INITS),
        )
        return settings, check_random_state(self.random_state)

    def _fit(
        self,
        acts: Any,
        unsafe: Any,
        categories: Any,
        settings: TrainingSettings,
        rng: np.random.Generator,
    ) -> SafetyPolytope:
        """``fit`` with the parameters already checked."""
        X = check_activations(acts)
        labels = as_unsafe_labels(unsafe, len(X))
        cats = None if categories is None else as_categories(categories, len(X))
        mean, scale = _standardisation(X, self.standardize)
        # trained before any attribute changes: a failed or interrupted refit keeps the old fit
        params, history = train_polytope(standardised(X, mean, scale), labels, settings, rng)
        self.n_features_in_ = X.shape[1]
        self.classes_ = CLASSES.copy()
        self.mean_, self.scale_ = mean, scale
        self._set_parameters(params)
        self.loss_history_ = history
        self.calibration_ = None
        self.metadata_ = {}  # a loaded polytope's (model, prompts, seed) described the old fit
        self.training_report_ = (
            None if cats is None else FacetReport.from_violations(self._violations(X) > 0.0, cats)
        )
        return self

    def _set_parameters(self, params: dict[str, np.ndarray]) -> None:
        self.normals_ = np.asarray(params["normals"], dtype=np.float64)
        self.offsets_ = np.asarray(params["offsets"], dtype=np.float64)
        weight = params.get("encoder_weight")
        bias = params.get("encoder_bias")
        self.encoder_weight_ = None if weight is None else np.asarray(weight, dtype=np.float64)
        self.encoder_bias_ = None if bias is None else np.asarray(bias, dtype=np.float64)

    @classmethod
    def from_parameters(
        cls,
        normals: Any,
        offsets: Any,
        *,
        encoder_weight: Any = None,
        encoder_bias: Any = None,
        mean: Any = None,
        scale: Any = None,
        layer: int | None = None,
    ) -> SafetyPolytope:
        """A fitted polytope from given facets (``c = normals @ f(z) - offsets``, z standardised
        with ``mean``/``scale``; ``encoder_weight``, with an optional ``encoder_bias``, makes it a
        concept encoder: an ``encoder_bias`` without it is refused).

        Examples
        --------
        >>> from trustlab.safety import SafetyPolytope
        >>> box = SafetyPolytope.from_parameters([[1.0, 0.0], [-1.0, 0.0]], [1.0, 1.0])
        >>> box.violations([[3.0, 5.0]]).tolist()
        [[2.0, -4.0]]
        """
        normals = as_float_array(normals, "normals", ndim=2)
        k, width = normals.shape
        offsets = as_float_array(offsets, "offsets", shape=(k,))
        concept = encoder_weight is not None
        if encoder_bias is not None and not concept:  # it would be dropped: a linear polytope
            raise InputError.bad(
                "encoder_bias", "an encoder_weight with it (a concept encoder)", encoder_bias
            )
        if concept:
            weight = as_float_array(encoder_weight, "encoder_weight", shape=(width, None))
            d = weight.shape[1]
            bias = np.zeros(width) if encoder_bias is None else encoder_bias
            bias = as_float_array(bias, "encoder_bias", shape=(width,))
        else:
            d = width
        mean = np.zeros(d) if mean is None else as_float_array(mean, "mean", shape=(d,))
        scale = np.ones(d) if scale is None else as_float_array(scale, "scale", shape=(d,))
        if (scale <= 0).any():
            raise InputError.bad("scale", "positive entries", scale)
        if layer is not None:
            check_positive_int(layer, "layer", minimum=0)
        polytope = cls(n_facets=k, encoder="concept" if concept else "linear", layer=layer)
        if concept:
            polytope.n_concepts = width
        params = {"normals": normals, "offsets": offsets}
        if concept:
            params.update(encoder_weight=weight, encoder_bias=bias)
        polytope._set_parameters(params)
        polytope.n_features_in_ = d
        polytope.classes_ = CLASSES.copy()
        polytope.mean_, polytope.scale_ = mean, scale
        polytope.loss_history_ = []
        polytope.training_report_ = None
        polytope.calibration_ = None
        return polytope

    # ----------------------------------------------------------------------------- detection

    def violations(self, acts: Any) -> np.ndarray:
        """Facet values ``c_k(h)`` of each row, shape (n, n_facets); > 0 means violated."""
        return self._violations(self._check_acts(acts))

    def decision_function(self, acts: Any) -> np.ndarray:
        """Unsafety score ``max_k c_k(h)`` (> 0 iff unsafe); use it for AUROC. ``acts`` is 2-D,
        as scikit-learn has it (:meth:`violations` and :meth:`is_unsafe` also take one state as
        a 1-D vector)."""
        return self._violations(self._check_acts(acts, one_row=False)).max(axis=1)

    def is_unsafe(self, acts: Any) -> np.ndarray:
        """True where some facet is violated (``max_k c_k > 0``)."""
        return self._is_unsafe(self._check_acts(acts))

    def predict(self, acts: Any) -> np.ndarray:
        """1 for unsafe, 0 for safe (scikit-learn style; unsafe is the positive class); ``acts``
        is 2-D, as for :meth:`decision_function`."""
        return self._is_unsafe(self._check_acts(acts, one_row=False)).astype(np.int64)

    def _check_acts(self, acts: Any, name: str = "acts", *, one_row: bool = True) -> np.ndarray:
        """Rows of the fitted width; ``one_row``: a 1-D vector is one state."""
        check_is_fitted(self, "normals_")
        return check_activations(acts, name, n_features=self.n_features_in_, one_row=one_row)

    def _features(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(encoder features, ReLU pre-activations or None) of raw rows ``X``."""
        z = standardised(X, self.mean_, self.scale_)
        if self.encoder_weight_ is None:
            return z, None
        pre = z @ self.encoder_weight_.T + self.encoder_bias_
        return np.maximum(pre, 0.0), pre

    def _violations(self, X: np.ndarray) -> np.ndarray:
        """The facet values of checked rows (the kernel behind every public detection method)."""
        features, _ = self._features(X)
        return features @ self.normals_.T - self.offsets_

    def _is_unsafe(self, X: np.ndarray) -> np.ndarray:
        """:meth:`is_unsafe` of checked rows."""
        return self._violations(X).max(axis=1) > 0.0

    def calibrate(self, safe_acts: Any, max_fpr: float = 0.01) -> SafetyPolytope:
        """Move every facet by one common shift so that a share ``max_fpr`` of ``safe_acts`` is
        flagged: afterwards a state is flagged iff its old score ``max_k c_k`` exceeds the
        ``(1 - max_fpr)`` empirical quantile of the safe scores (at most ``floor(max_fpr * n)``
        of the n safe rows are flagged; fewer when scores tie).

        Use it on safe states of the kind the detector will be run on, e.g. the states of
        benign *generations* (:func:`~trustlab.safety.generation_states`) before checking every
        generated step: a polytope fitted on prompt states flags most of those otherwise. The
        shift can be negative (the detector gets stricter). It subtracts the same amount from
        every facet value (``offsets_ += shift``), so detection, projection and storage all use
        the calibrated facets; :attr:`calibration_` records it. The training activations are
        not kept, so :attr:`training_report_` (``facet_report()`` without arguments) still
        describes the facets before calibration; pass states and categories to
        :meth:`facet_report` for the calibrated ones.

        Parameters
        ----------
        safe_acts : array-like (n, d)
            States that should not be flagged.
        max_fpr : float in (0, 1), default 0.01
            Target share of them flagged.

        Returns
        -------
        SafetyPolytope
            ``self``, calibrated.

        Examples
        --------
        >>> import numpy as np
        >>> from trustlab.safety import SafetyPolytope
        >>> line = SafetyPolytope.from_parameters([[1.0]], [0.0])
        >>> safe = np.arange(100.0)[:, None]  # scores 0..99, 99 of them flagged at threshold 0
        >>> int(line.calibrate(safe, max_fpr=0.05).is_unsafe(safe).sum())
        5
        """
        X = self._check_acts(safe_acts, "safe_acts")
        max_fpr = check_probability(max_fpr, "max_fpr")
        scores = np.sort(self._violations(X).max(axis=1))[::-1]
        allowed = int(math.floor(max_fpr * len(scores)))
        shift = float(scores[allowed]) if allowed < len(scores) else float(scores[-1]) - 1.0
        offsets = self.offsets_
        self.offsets_ = offsets + shift
        # the facet values are recomputed against the moved offsets, and their rounding can
        # leave a state whose old score equals the threshold just above 0: raise the shift by
        # what rounding left until exactly the states above the threshold are flagged
        for _ in range(8):
            after = self._violations(X).max(axis=1)
            excess = after[after > 0.0]
            if len(excess) <= allowed:
                break
            nudge = max(float(np.sort(excess)[len(excess) - allowed - 1]), 0.0)
            # at least one step of the larger of shift and the offsets, or the sum rounds back
            size = max(abs(shift), float(np.abs(self.offsets_).max()))
            shift += max(nudge, float(np.spacing(size)))
            self.offsets_ = offsets + shift
        previous = getattr(self, "calibration_", None) or {"shift": 0.0}
        self.calibration_ = {
            "shift": previous["shift"] + shift,
            "max_fpr": max_fpr,
            "n_states": len(scores),
            "fpr": float((self._violations(X).max(axis=1) > 0.0).mean()),
        }
        return self

    @property
    def coef_(self) -> np.ndarray:
        """Linear encoder: facet normals in the raw activation space, (n_facets, d), with
        ``violations(X) = X @ coef_.T + intercept_``."""
        check_is_fitted(self, "normals_")
        if self.encoder_weight_ is not None:
            raise AttributeError("coef_ exists only for the linear encoder")
        return self.normals_ / self.scale_

    @property
    def intercept_(self) -> np.ndarray:
        """Linear encoder: ``-(offsets_ + coef_ @ mean_)`` (see :attr:`coef_`)."""
        return -(self.offsets_ + self.coef_ @ self.mean_)

    # ---------------------------------------------------------------------------- correction

    def project(
        self, acts: Any, *, margin: float = 1e-6, norm: str = "l2", max_iter: int = MAX_ITER
    ) -> Projection:
        """The minimal correction of each row into the polytope (``c_k(h') <= -margin``).

        Rows already inside (``max_k c_k <= -margin``, to rounding) are returned unchanged, bit
        for bit. Linear encoder: the exact Euclidean (``norm="l2"``, a quadratic program with a
        KKT certificate) or L1 (``norm="l1"``, a linear program) nearest point. Concept encoder:
        sequential linearisation (L2 only) until every facet holds or ``max_iter`` steps pass;
        ``feasible`` says which rows got there.

        The small default ``margin`` puts corrected rows strictly inside, so ``is_unsafe`` is
        False on them despite rounding; a larger margin (in facet-value units) corrects more
        firmly.

        Returns
        -------
        Projection

        Examples
        --------
        >>> from trustlab.safety import SafetyPolytope
        >>> box = SafetyPolytope.from_parameters([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
        >>> result = box.project([[3.0, 0.0], [0.5, 0.5]], margin=0.0)
        >>> result.points.round(6).tolist(), result.moved.tolist()
        ([[1.0, 0.0], [0.5, 0.5]], [True, False])
        """
        X = self._check_acts(acts)
        margin = check_non_negative(margin, "margin")
        norm = check_choice(norm, "norm", NORMS)
        max_iter = check_positive_int(max_iter, "max_iter")
        if self.encoder_weight_ is not None and norm != "l2":
            raise InputError.bad("norm", "'l2' for the concept encoder", norm)
        return self._project(X, margin, norm, max_iter)

    def _project(
        self, X: np.ndarray, margin: float, norm: str = "l2", max_iter: int = MAX_ITER
    ) -> Projection:
        """:meth:`project` of checked rows with checked options."""
        concept = self.encoder_weight_ is not None
        values = self._violations(X)
        tolerance = _inside_tolerance(values, margin)
        worst = values.max(axis=1)
        # the rounding slack grows with the largest |c_k|: never let it excuse a flagged row
        moved = (worst > -margin + tolerance) | (worst > 0.0)
        points = X.copy()
        feasible = np.ones(len(X), dtype=bool)
        residual = np.zeros(len(X))
        iterations = np.zeros(len(X), dtype=np.int64)
        for i in np.flatnonzero(moved):
            solve = self._project_row(X[i], margin, norm, max_iter)
            points[i], feasible[i] = solve.point, solve.feasible
            residual[i], iterations[i] = solve.kkt_residual, solve.iterations
        after_values = self._violations(points)
        # the final word on "inside" is the facet values as is_unsafe computes them
        for i in np.flatnonzero(moved & feasible):
            feasible[i] = unflagged(after_values[i], margin)
        after = after_values.max(axis=1)
        return Projection(
            method="sequential-linearisation" if concept else f"exact-{norm}",
            norm=norm,
            margin=margin,
            moved=moved,
            feasible=feasible,
            distance=_distances(points - X, norm),
            max_violation=after,
            points=points,
            kkt_residual=residual,
            iterations=iterations,
        )

    def _project_row(self, x: np.ndarray, margin: float, norm: str, max_iter: int):
        if self.encoder_weight_ is None:
            solve = project_linear_l2 if norm == "l2" else project_linear_l1
            return solve(x, self.coef_, -self.intercept_, margin)
        return project_concept(
            x,
            lambda y: self._violations(y[None, :])[0],
            self._jacobian,
            margin,
            max_iter,
        )

    def _jacobian(self, x: np.ndarray) -> np.ndarray:
        """d c / d x at ``x`` (exact on the current ReLU pattern), shape (n_facets, d)."""
        _, pre = self._features(x[None, :])
        active = (pre[0] > 0).astype(np.float64)
        return (self.normals_ * active) @ (self.encoder_weight_ / self.scale_)

    # ------------------------------------------------------------------------- explanations

    def facet_report(self, acts: Any = None, categories: Any = None) -> FacetReport:
        """Which facets fire for which category, with the mutual information between them.

        With no arguments: the report on the training data (``fit`` must have had
        ``categories``). Otherwise on the given activations and one category per row.
        """
        check_is_fitted(self, "normals_")
        if acts is None and categories is None:
            if self.training_report_ is None:
                raise InputError.bad(
                    "categories", "categories given to fit(), or acts and categories here", None
                )
            return self.training_report_
        if acts is None or categories is None:
            raise InputError.bad("acts, categories", "both or neither", "only one of them")
        X = self._check_acts(acts)
        cats = as_categories(categories, len(X))
        return FacetReport.from_violations(self._violations(X) > 0.0, cats)

    # ------------------------------------------------------------------------------- storage

    def save(self, directory: str | os.PathLike, *, metadata: dict | None = None) -> Path:
        """Write ``polytope.json`` (settings, metadata) and ``polytope.npz`` (arrays; no pickle).

        ``metadata`` (a dict of JSON-safe values; e.g. the model name and prompt format) is
        stored as is and comes back as ``metadata_`` from :meth:`load`; metadata that cannot be
        stored is refused before anything is written. Returns the folder, which :meth:`load`
        reads back.
        """
        check_is_fitted(self, "normals_")
        if self.layer is not None:  # set by hand after fitting: load() would read it back as is
            check_positive_int(self.layer, "layer", minimum=0)
        if metadata is not None and not isinstance(metadata, dict):  # load() reads a dict
            raise InputError.bad("metadata", "a dict of JSON-safe values, or None", metadata)
        info = {
            "format_version": FORMAT_VERSION,
            "params": storable_params(self),
            "n_features_in": self.n_features_in_,
            "loss_history": self.loss_history_,
            "training_report": self.training_report_,
            "calibration": getattr(self, "calibration_", None),
            "metadata": to_jsonable(
                metadata if metadata is not None else getattr(self, "metadata_", {}), "metadata"
            ),
        }
        # the text first: a refusal must not leave the new arrays beside the old settings
        text = json_text(info)
        out = output_dir(directory, "directory")
        arrays = {
            name: value
            for name in _ARRAY_NAMES
            if (value := getattr(self, name + "_", None)) is not None
        }
        # whole or absent (replace_saved): stopped in the arrays' write, the earlier polytope
        # stays whole; later, the folder holds no settings, so nothing loads (never the new
        # normals under the old layer and metadata)
        replace_saved(out, {ARRAYS_FILE: lambda tmp: _save_npz(tmp, arrays)}, {PARAMS_FILE: text})
        return out

    @classmethod
    def load(cls, directory: str | os.PathLike) -> SafetyPolytope:
        """Read a polytope written by :meth:`save` from its folder."""
        folder = Path(directory)
        info = read_saved_params(
            folder,
            PARAMS_FILE,
            ARRAYS_FILE,
            "SafetyPolytope.save",
            FORMAT_VERSION,
            keys=("n_features_in",),
        )
        try:
            polytope = cls(**info["params"])
        except TypeError as exc:  # a setting this SafetyPolytope does not have
            raise ResourceError(f"{folder / PARAMS_FILE}: {exc}") from exc
        names = ["normals", "offsets", "mean", "scale"]
        if polytope.encoder == "concept":
            names += ["encoder_weight", "encoder_bias"]
        arrays = read_saved_arrays(folder / ARRAYS_FILE, names)
        check_saved_arrays(arrays, int(info["n_features_in"]), folder / ARRAYS_FILE)
        polytope._set_parameters(arrays)
        polytope.mean_, polytope.scale_ = arrays["mean"], arrays["scale"]
        polytope.n_features_in_ = int(info["n_features_in"])
        polytope.classes_ = CLASSES.copy()
        polytope.loss_history_ = list(info.get("loss_history", []))
        report = info.get("training_report")
        polytope.training_report_ = None if report is None else FacetReport.from_dict(report)
        metadata = info.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ResourceError(f"{folder / PARAMS_FILE}: metadata is not a JSON object")
        polytope.metadata_ = dict(metadata)
        polytope.calibration_ = info.get("calibration")
        return polytope


# ================================================================================== helpers


def _standardisation(X: np.ndarray, standardize: bool) -> tuple[np.ndarray, np.ndarray]:
    if not standardize:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    # without overflow at extreme magnitudes (an inf scale gave every row the same score); a
    # constant coordinate is left unscaled instead of dividing by 0
    return column_mean_scale(X)


def _inside_tolerance(values: np.ndarray, margin: float) -> np.ndarray | float:
    """Rounding slack of "already inside": a corrected row sits at -margin up to ~1e-12."""
    return 1e-9 * (1.0 + margin + np.abs(values).max(axis=1))


def _distances(steps: np.ndarray, norm: str) -> np.ndarray:
    return np.abs(steps).sum(axis=1) if norm == "l1" else np.linalg.norm(steps, axis=1)


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as fh:  # a file object: np.savez would append .npz to a bare name
        np.savez(fh, **arrays)

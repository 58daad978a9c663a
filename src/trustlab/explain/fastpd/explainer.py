"""The FastPD explainer: exact PD functions, decomposition and SHAP values of a tree ensemble."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from trustlab._checks import as_float_array, check_finite, check_n_jobs, check_positive_int
from trustlab._progress import check_progress
from trustlab.errors import InputError
from trustlab.explain.fastpd._engine import Engine
from trustlab.explain.fastpd._ensemble import TreeEnsemble
from trustlab.explain.fastpd._features import (
    beyond_input_dtype,
    dense_rows,
    explained_row_ids,
    feature_columns,
    numeric_frame,
    resolve_features,
    squeeze_output,
)
from trustlab.explain.fastpd._pipeline import split_pipeline, transform_rows, transformed_names
from trustlab.explain.fastpd._trees import as_tree_ensemble, calibrate
from trustlab.explain.fastpd.results import (
    Decomposition,
    Explanation,
    Importance,
    PartialDependence,
)

__all__ = ["FastPD", "PD_FEATURES"]

#: :meth:`FastPD.explain` draws PD curves of this many most important features by default.
PD_FEATURES = 3
# The default PD grid: this many background quantiles between these two.
GRID_RESOLUTION = 20
PERCENTILES = (0.05, 0.95)
# Background rows the model's own output is checked on (and the constant offset measured on).
_PROBE_ROWS = 64
# explain() works through its rows in batches of at most this many (fewer when the components
# of a batch, of every output, would exceed _BATCH_VALUES numbers), reporting progress after each.
BATCH_ROWS = 4096
_BATCH_VALUES = 2**25


class FastPD(BaseEstimator):
    """Exact interventional PD functions, decomposition and SHAP values for a tree ensemble.

    ``FastPD(model, ...)`` stores the parameters; :meth:`fit` takes the background, the rows the
    PD functions average over, and returns the explainer.

    Parameters
    ----------
    model : fitted tree model, or a scikit-learn Pipeline whose last step is one
        scikit-learn DecisionTree, RandomForest, ExtraTrees, GradientBoosting or
        HistGradientBoosting (regressor or classifier), an xgboost Booster / XGBModel, or a
        LightGBM Booster / LGBMModel (:meth:`supports` tells). What is decomposed: the
        prediction for regressors with an identity link (else the raw margin: the log of the
        prediction for poisson, gamma and tweedie, the log-odds for xgboost ``reg:logistic`` and
        LightGBM ``cross_entropy``; :attr:`output_kind_` says which), the class probabilities
        for forest classifiers and the raw margin (log-odds, softmax logits) for boosting
        classifiers. A Pipeline is explained
        through its transform: rows given to :meth:`fit` and the other methods are raw input
        rows, passed through the steps before the tree model, and the features are the
        transformed columns (named by the transform's ``get_feature_names_out``).
    max_order : int, optional
        Default largest component order for :meth:`decompose` and :meth:`importance`. SHAP
        values and interaction values are always exact (all orders).
    n_jobs : int, optional
        Threads over blocks of trees (joblib's rule: None or 1 runs in the calling thread, -1
        uses every core).
    feature_names : sequence of str, optional
        Defaults to the model's (a Pipeline's: its transform's output names), then the
        background's columns, then ``x0, x1, ...``. When the model knows its feature names
        (``feature_names_in_``), a DataFrame's columns are always matched by those, and
        ``feature_names`` only label the results: names that are the model's own in another
        order are refused (they would put features under each other's names). A model without
        names has a DataFrame's columns matched by ``feature_names``.

    Attributes
    ----------
    background_ : ndarray (n_b, n_features)
    expected_value_ : float or ndarray (n_outputs,)
        m_empty: the mean model output over the background.
    ensemble_ : the model's trees in FastPD's internal form (calibrated on the background)
    feature_names_, output_names_ : tuple of str
    output_kind_ : str
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from trustlab.explain import FastPD
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X[:, 0] * X[:, 1] + X[:, 2]
    >>> model = GradientBoostingRegressor(n_estimators=20, max_depth=3).fit(X, y)
    >>> explainer = FastPD(model).fit(X)
    >>> phi = explainer.shap_values(X[:5])
    >>> bool(np.allclose(phi.sum(1), model.predict(X[:5]) - explainer.expected_value_))
    True
    """

    def __init__(
        self,
        model: Any,
        *,
        max_order: int | None = None,
        n_jobs: int | None = None,
        feature_names: Sequence[str] | None = None,
    ):
        self.model = model
        self.max_order = max_order
        self.n_jobs = n_jobs
        self.feature_names = feature_names

    def __sklearn_clone__(self) -> FastPD:  # keeps the fitted model: it is never refitted
        return type(self)(**self.get_params(deep=False))  # (clone would make it an unfitted copy)

    @staticmethod
    def supports(model: Any) -> bool:
        """Whether FastPD can explain ``model`` (a fitted tree model of a supported kind).

        >>> from sklearn.linear_model import LinearRegression
        >>> FastPD.supports(LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0]))
        False
        """
        try:
            as_tree_ensemble(split_pipeline(model)[1])
        except InputError:
            return False
        return True

    def fit(self, background: Any) -> FastPD:
        """Take the background rows the PD functions average over; returns self.

        Parameters
        ----------
        background : array-like (n_b, n_features)
            For example the training data. NaN marks a missing value where the model accepts
            them; it follows each tree's default direction. A DataFrame's columns are matched
            to the model's feature names by name.
        """
        max_order = self.max_order
        if max_order is not None:
            max_order = check_positive_int(max_order, "max_order")
        n_workers = check_n_jobs(self.n_jobs)
        transform, estimator = split_pipeline(self.model)
        ensemble = as_tree_ensemble(estimator)
        given = self.feature_names
        if transform is not None:
            background = transform_rows(transform, background, "background")
            if given is None:
                given = transformed_names(transform, background.shape[1])
        names, columns = _feature_names(ensemble, background, given)
        rows = _rows(background, "background", ensemble, columns)
        probe = np.unique(np.linspace(0, len(rows) - 1, _PROBE_ROWS).astype(int))
        self.ensemble_ = calibrate(estimator, ensemble, rows[probe])
        self._transform = transform
        self.background_ = rows
        self.n_features_in_ = ensemble.n_features
        self.feature_names_ = names
        self.output_names_ = self.ensemble_.output_names
        self.output_kind_ = self.ensemble_.output_kind
        self._columns = columns
        self._max_order = max_order
        self._engine = Engine(self.ensemble_, rows, n_workers)
        return self

    @property
    def expected_value_(self) -> float | np.ndarray:
        """m_empty, the mean output over the background (a float for a single output)."""
        self._check_fitted()
        value = self._engine.intercept()
        return float(value[0]) if len(value) == 1 else value

    # ------------------------------------------------------------------ public API

    def pd_function(self, X_eval: Any, subset: Any) -> np.ndarray:
        """The interventional PD function v_U at the rows of ``X_eval``.

        ``v_U(x) = mean over background rows z of model(x_U, z_rest)``, computed exactly (equal
        to that brute-force average up to floating-point rounding).

        Parameters
        ----------
        X_eval : array-like (n, n_features)
        subset : feature name or index, or a sequence of them (may be empty: the mean output)

        Returns
        -------
        ndarray (n,) for a single-output model, else (n, n_outputs).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(1).normal(size=(100, 2)); y = X[:, 0] + X[:, 1]
        >>> fp = FastPD(DecisionTreeRegressor(max_depth=3).fit(X, y)).fit(X)
        >>> fp.pd_function(X[:3], [0]).shape
        (3,)
        """
        X = self._rows(X_eval, "X_eval")
        features = resolve_features(subset, self.feature_names_, "subset")
        return squeeze_output(self._engine.pd(X, features))

    def decompose(self, X_eval: Any, max_order: int | None = None) -> Decomposition:
        """All components m_S with |S| <= max_order at the rows of ``X_eval``.

        ``max_order`` defaults to the explainer's, then to the widest root-to-leaf path (the
        complete decomposition, whose components sum to the model output).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(2).normal(size=(150, 3)); y = X[:, 0] * X[:, 1]
        >>> rf = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
        >>> dec = FastPD(rf).fit(X).decompose(X[:4])
        >>> bool(np.allclose(dec.prediction(), rf.predict(X[:4])))
        True
        """
        X = self._rows(X_eval, "X_eval")
        return self._decompose(X, self._order(max_order))

    def shap_values(self, X_eval: Any) -> np.ndarray:
        """Exact interventional SHAP values with the whole background.

        They equal ``sum over S containing j of m_S / |S|`` of the complete decomposition, and
        shap's interventional TreeExplainer given ``maskers.Independent(bg,
        max_samples=len(bg))``. Each row sums to the output minus :attr:`expected_value_`.

        Returns
        -------
        ndarray (n, n_features) for a single-output model, else (n, n_features, n_outputs).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import HistGradientBoostingClassifier
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(3).normal(size=(300, 3)); y = X[:, 0] + X[:, 1] > 0
        >>> clf = HistGradientBoostingClassifier(max_iter=10).fit(X, y)
        >>> FastPD(clf).fit(X[:100]).shap_values(X[:5]).shape   # log-odds: one output
        (5, 3)
        """
        X = self._rows(X_eval, "X_eval")
        return squeeze_output(self._engine.shap(X))

    def interaction_values(self, X_eval: Any) -> np.ndarray:
        """Exact interventional SHAP interaction values, laid out as shap's.

        Off the diagonal, ``[i, j, k]`` is half the Shapley interaction index of features j and k
        (``sum over S containing j and k of m_S / (|S| - 1)``); the diagonal holds the rest of
        the SHAP value, so ``values.sum(axis=2)`` equals :meth:`shap_values`. For an additive
        model the off-diagonal entries are zero.

        Returns
        -------
        ndarray (n, d, d) for a single-output model, else (n, d, d, n_outputs).
        """
        X = self._rows(X_eval, "X_eval")
        return squeeze_output(self._engine.interactions(X))

    def pd_grid(
        self,
        features: Any,
        grid: Any = None,
        *,
        grid_resolution: int = GRID_RESOLUTION,
        percentiles: tuple[float, float] = PERCENTILES,
    ) -> PartialDependence:
        """The PD function of one or two features on a grid, for PD plots.

        Parameters
        ----------
        features : a feature (name or index) or a pair of them
        grid : array (one feature) or pair of arrays (two), optional
            Defaults to ``grid_resolution`` quantiles of the background between ``percentiles``
            (the distinct values when there are fewer; missing values are left out, and a
            feature missing in every background row needs a grid). A given grid may hold NaN
            (the missing value) when the model accepts missing values.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(4).normal(size=(200, 2)); y = X[:, 0] * X[:, 1]
        >>> fp = FastPD(GradientBoostingRegressor(n_estimators=20).fit(X, y)).fit(X)
        >>> fp.pd_grid([0, 1], grid_resolution=5).values.shape
        (5, 5, 1)
        """
        self._check_fitted()
        index = resolve_features(features, self.feature_names_, "features")
        if len(index) not in (1, 2):
            raise InputError.bad("features", "one or two features", features)
        grids = self._grids(index, grid, grid_resolution, percentiles)
        return self._pd_grid(index, grids)

    def importance(self, X_eval: Any = None, *, max_order: int | None = None) -> Importance:
        """Mean |SHAP| per feature and mean |m_S| per component over ``X_eval`` (default: the
        background), as glex's variable importance."""
        self._check_fitted()
        X = self.background_ if X_eval is None else self._rows(X_eval, "X_eval")
        order = self._order(max_order)
        return Importance.from_values(
            self._engine.shap(X), self._decompose(X, order), self.ensemble_.rounding_level()
        )

    def explain(
        self,
        X_eval: Any,
        *,
        features: Any = None,
        max_order: int = 2,
        row_ids: Any = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Explanation:
        """Explain rows at once: SHAP values, importance (components up to ``max_order``), the
        mean output and PD curves.

        Parameters
        ----------
        X_eval : array-like (n, n_features)
            The rows to explain.
        features : feature names or indices, optional
            The features to draw PD curves of (default: the :data:`PD_FEATURES` with the largest
            mean |SHAP| among those with a value in some background row: a curve's grid is
            drawn from the background's values, so a feature missing in every background row
            has none and, when named here, is refused; a feature whose mean |SHAP| is at most
            the importance's ``rounding_level`` is unused and gets no default curve, unless no
            feature is used: then the first one).
        max_order : int, default 2
            Largest component order in the importance.
        row_ids : array-like (n,), optional
            An id per row, kept in the ``row`` column of ``shap_table()`` so the values join
            back to the input (default: a DataFrame's index, else 0 .. n-1).
        progress : callable, optional
            Called as ``progress(rows_done, n_rows)`` after each batch of rows.

        Returns
        -------
        Explanation

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.ensemble import GradientBoostingRegressor
        >>> from trustlab.explain import FastPD
        >>> X = np.random.default_rng(5).normal(size=(200, 3)); y = X[:, 0] * X[:, 1]
        >>> model = GradientBoostingRegressor(n_estimators=20).fit(X, y)
        >>> explanation = FastPD(model).fit(X[:100]).explain(X[100:150], features=[0])
        >>> explanation.shap_values.shape, [c.features for c in explanation.partial_dependence]
        ((50, 3), [('x0',)])
        """
        check_progress(progress)  # it is called only after the first batch of rows
        ids = explained_row_ids(X_eval, row_ids)
        X = self._rows(X_eval, "X_eval")
        if ids is not None and len(ids) != len(X):
            raise InputError.bad("row_ids", f"one id per row ({len(X)})", ids)
        order = self._order(max_order)
        chosen = None
        if features is not None:
            chosen = resolve_features(features, self.feature_names_, "features")
            self._check_observed(chosen, "features")  # their grids come from the background
        phi, importance = self._explain_rows(X, order, progress)
        if chosen is None:  # the most important features that have a grid to draw on
            top = importance.top_features(self.n_features_in_)
            index = [j for j in map(self.feature_names_.index, top) if self._observed(j)]
            # a feature whose mean |SHAP| is rounding level has a flat curve: not "important"
            used = [j for j in index if importance.shap[j].sum() > importance.rounding_level]
            chosen = (used or index[:1])[:PD_FEATURES]
        curves = tuple(
            self._pd_grid([j], self._grids([j], None, GRID_RESOLUTION, PERCENTILES)) for j in chosen
        )
        return Explanation(
            importance=importance,
            expected_value=np.atleast_1d(self.expected_value_),
            n_background=len(self.background_),
            partial_dependence=curves,
            shap_values=phi,
            rows=X,
            row_ids=ids,
        )

    def _explain_rows(self, X: np.ndarray, order: int, progress) -> tuple[np.ndarray, Importance]:
        """SHAP values and their importance over the rows of X, in batches of rows."""
        n, d, n_out = len(X), self.n_features_in_, len(self.output_names_)
        self._engine.check_result_size(n * d * n_out, "fewer rows")
        per_row = max(1, self._engine.n_components(order)) * n_out  # each output's components
        step = max(64, min(BATCH_ROWS, _BATCH_VALUES // per_row))
        if n <= step:
            phi = squeeze_output(self._engine.shap(X))
            level = self.ensemble_.rounding_level()
            importance = Importance.from_values(phi, self._decompose(X, order), level)
            if progress is not None:
                progress(n, n)
            return phi, importance
        parts, total = [], None
        for start in range(0, n, step):
            block = X[start : start + step]
            parts.append(self._engine.shap(block))
            keys, values = self._engine.components(block, order)
            summed = np.abs(values).sum(axis=0)  # (n_components, n_outputs)
            total = summed if total is None else total + summed
            if progress is not None:
                progress(min(start + step, n), n)
        phi = np.concatenate(parts)
        importance = Importance(
            feature_names=self.feature_names_,
            output_names=self.output_names_,
            output_kind=self.output_kind_,
            shap=np.abs(phi).mean(axis=0),
            components={key: total[i] / n for i, key in enumerate(keys)},
            n_rows=n,
            max_order=order,
            rounding_level=self.ensemble_.rounding_level(),
        )
        return squeeze_output(phi), importance

    # ------------------------------------------------------------------ internals

    def _check_fitted(self) -> None:
        if not hasattr(self, "_engine"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this FastPD explainer is not fitted: call fit(background) first")

    def _rows(self, X: Any, name: str) -> np.ndarray:
        self._check_fitted()
        if self._transform is not None:
            X = transform_rows(self._transform, X, name)
        return _rows(X, name, self.ensemble_, self._columns)

    def _order(self, max_order: int | None) -> int:
        """The component order to compute: the argument, the explainer's, else every order."""
        width = self._engine.max_width
        if max_order is not None:
            order = check_positive_int(max_order, "max_order")
        else:
            order = width if self._max_order is None else self._max_order
        return max(min(order, width), 1)

    def _decompose(self, X: np.ndarray, order: int) -> Decomposition:
        keys, values = self._engine.components(X, order)
        components = {(): squeeze_output(np.tile(self._engine.intercept(), (len(X), 1)))}
        for i, key in enumerate(keys):
            components[key] = squeeze_output(values[:, i])
        return Decomposition(
            components=components,
            feature_names=self.feature_names_,
            output_names=self.output_names_,
            output_kind=self.output_kind_,
            max_order=order,
            complete=order >= self._engine.max_width,
            n_background=len(self.background_),
        )

    def _pd_grid(self, index: list[int], grids: list[np.ndarray]) -> PartialDependence:
        mesh = np.meshgrid(*grids, indexing="ij")
        X = np.zeros((mesh[0].size, self.n_features_in_))
        for j, values in zip(index, mesh, strict=True):
            X[:, j] = values.ravel()
        values = self._engine.pd(X, index).reshape(*[len(g) for g in grids], -1)
        return PartialDependence(
            features=tuple(self.feature_names_[j] for j in index),
            grid=tuple(grids),
            values=values,
            output_names=self.output_names_,
            output_kind=self.output_kind_,
            n_background=len(self.background_),
        )

    def _observed(self, j: int) -> bool:
        """Whether feature j has a value (not NaN) in some background row."""
        return bool((~np.isnan(self.background_[:, j])).any())

    def _check_observed(self, index: Sequence[int], argument: str) -> None:
        """A default PD grid is drawn from the background's values: refuse a feature that is
        missing in every background row."""
        for j in index:
            if not self._observed(j):
                raise InputError(
                    f"{argument}: expected features with values in the background (a default "
                    f"PD grid is drawn from them), got {self.feature_names_[j]!r}, missing (NaN) "
                    f"in all {len(self.background_)} background rows; choose another feature, "
                    "a larger background, or give the grid",
                    argument=argument,
                )

    def _grids(self, index, grid, resolution, percentiles) -> list[np.ndarray]:
        if grid is None:
            self._check_observed(index, "features")
            resolution = check_positive_int(resolution, "grid_resolution", minimum=2)
            try:
                low, high = (float(p) for p in percentiles)
            except (TypeError, ValueError):
                low = high = math.nan
            if not 0.0 <= low < high <= 1.0:  # fractions, as scikit-learn's partial_dependence
                raise InputError.bad(
                    "percentiles", "two fractions 0 <= low < high <= 1", percentiles
                )
            out = []
            for j in index:
                column = self.background_[:, j]
                column = column[~np.isnan(column)]
                distinct = np.unique(column)
                if len(distinct) <= resolution:
                    out.append(distinct)
                else:
                    qs = np.linspace(low, high, resolution)
                    out.append(np.unique(np.quantile(column, qs)))
            return out
        if len(index) == 1:  # an array (of one value too), or a sequence holding one array
            single = np.asarray(grid, dtype=object)
            wrapped = single.ndim >= 1 and len(single) == 1 and np.ndim(grid[0]) >= 1
            grids = [grid[0]] if wrapped else [grid]
        else:
            grids = list(grid)
        if len(grids) != len(index):
            raise InputError.bad("grid", f"{len(index)} grid arrays, one per feature", grid)
        # NaN is a value a model that routes missing values can be evaluated at; infinity is not
        nan_ok = self.ensemble_.allows_missing
        out = [as_float_array(g, "grid", ndim=1, allow_nan=nan_ok) for g in grids]
        for values in out:
            check_finite(np.where(np.isnan(values), 0.0, values), "grid")
            if beyond_input_dtype(values[:, None], self.ensemble_.input_dtype) is not None:
                raise InputError.bad("grid", "values within float32's range (|x| <= 3.4e38)", grid)
        return out


def _feature_names(
    ensemble: TreeEnsemble, background: Any, names: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The feature names shown, and the names a DataFrame's columns are matched by (None: by
    position). The model's own names, when it has them, are the ones matched: given names that
    are the model's in another order are refused; other given names are labels only."""
    d = ensemble.n_features
    known = ensemble.feature_names
    known = tuple(str(n) for n in known) if known is not None and len(known) == d else None
    if names is not None:
        if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):  # "abc" is not 3
            raise InputError.bad("feature_names", f"a sequence of {d} distinct names", names)
        names = tuple(str(n) for n in names)
        if len(names) != d or len(set(names)) != d:
            raise InputError.bad("feature_names", f"{d} distinct names", list(names))
        if known is None:
            return names, names
        moved = [n for j, n in enumerate(names) if n in known and known[j] != n]
        if moved:
            raise InputError.bad(
                "feature_names",
                f"the model's feature names in its order {list(known)}, or labels that are not "
                f"among them (the model's own names place the columns; {moved[0]!r} is its "
                f"feature {known.index(moved[0])}, not {names.index(moved[0])})",
                list(names),
            )
        return names, known
    if known is not None:
        return known, known
    columns = getattr(background, "columns", None)
    if columns is not None and len(columns) == d:
        names = tuple(str(c) for c in columns)
        return names, names
    return tuple(f"x{j}" for j in range(d)), None


def _rows(X: Any, name: str, ensemble: TreeEnsemble, names: Sequence[str] | None) -> np.ndarray:
    """Validate rows: the model's features (by ``names`` for data frames), NaN only if allowed."""
    if getattr(X, "columns", None) is not None:  # a frame: its text columns named if any
        X = numeric_frame(X if names is None else feature_columns(X, names, name), name)
    arr = as_float_array(dense_rows(X, name), name, ndim=2, allow_nan=True)
    d = ensemble.n_features
    if arr.shape[1] != d:
        raise InputError.bad(name, f"{d} feature columns, as the model", arr)
    if np.isinf(arr).any():
        check_finite(np.where(np.isnan(arr), 0.0, arr), name)
    big = beyond_input_dtype(arr, ensemble.input_dtype)
    if big is not None:
        raise InputError(
            f"{name}: expected values the model can read ({ensemble.model_name} reads float32: "
            f"|x| <= 3.4e38), got {arr[big]:g} at index {big}",
            argument=name,
        )
    if not ensemble.allows_missing and np.isnan(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
        raise InputError(
            f"{name}: expected no missing values ({ensemble.model_name} does not accept "
            f"NaN), got NaN at index {where}",
            argument=name,
        )
    return arr

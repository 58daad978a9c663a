"""Explain a tree model on a table: its feature columns, the rows to explain, the background.

:func:`plan_table` checks everything first (the feature columns, every value of every row, the
chosen rows) and returns a :class:`TablePlan` that says what the work will be;
:meth:`TablePlan.explain` does it. :func:`explain_table` does both at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_random_state
from trustlab._progress import check_progress
from trustlab.errors import InputError
from trustlab.explain.fastpd._features import beyond_input_dtype, dense_rows, resolve_features
from trustlab.explain.fastpd._pipeline import split_pipeline, transform_rows, transformed_names
from trustlab.explain.fastpd._trees import as_tree_ensemble
from trustlab.explain.fastpd.explainer import FastPD
from trustlab.explain.fastpd.results import Explanation

__all__ = ["TablePlan", "plan_table", "explain_table", "DEFAULT_BACKGROUND_SIZE"]

#: Background rows drawn at random when neither ``background_rows`` nor ``background_size`` is
#: given.
DEFAULT_BACKGROUND_SIZE = 1000
_WHERE = "counted from 0 after the header"


@dataclass(frozen=True)
class TablePlan:
    """What :func:`explain_table` will do, checked before any of the work.

    Attributes
    ----------
    model : the tree model that is explained (a Pipeline's last step)
    feature_names : tuple of str
        The model's features (for a Pipeline: its transform's output columns).
    input_columns : tuple of str
        The table's columns the model reads.
    unused_columns : tuple of str
        The table's other columns (the label, ``exclude`` and, when the model stores its feature
        names, every column it does not use).
    names_from_model : bool
        Whether the model (or Pipeline) stores the names of its input columns.
    pipeline : bool
        Whether the model is a Pipeline explained through its transform.
    rows : ndarray of int
        The explained rows: positions in the table (for a file: data rows counted from 0 after
        the header).
    background_rows : ndarray of int
        The background rows, positions as ``rows``.
    n_table_rows, n_trees : int
    features : tuple of str or None
        The features PD curves are drawn for (None: the most important ones).
    max_order : int
    """

    model: Any = field(repr=False)
    feature_names: tuple[str, ...]
    input_columns: tuple[str, ...]
    unused_columns: tuple[str, ...]
    names_from_model: bool
    pipeline: bool
    rows: np.ndarray = field(repr=False)
    background_rows: np.ndarray = field(repr=False)
    n_table_rows: int
    n_trees: int
    features: tuple[str, ...] | None
    max_order: int
    values: np.ndarray = field(repr=False)  # (n_table_rows, n_features): every row, checked

    def explain(
        self, *, n_jobs: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> Explanation:
        """Fit FastPD on the background rows and explain the chosen rows.

        ``progress(rows_done, n_rows)`` is called after each batch of explained rows.
        """
        explainer = FastPD(self.model, feature_names=self.feature_names, n_jobs=n_jobs)
        explainer.fit(self.values[self.background_rows])
        return explainer.explain(
            self.values[self.rows],
            features=self.features,
            max_order=self.max_order,
            row_ids=self.rows,
            progress=progress,
        )


def plan_table(
    model: Any,
    data: Any,
    *,
    label: str | None = None,
    exclude: Sequence[str] = (),
    rows: Any = None,
    background_rows: Any = None,
    background_size: int | None = None,
    features: Sequence[str] | None = None,
    max_order: int = 2,
    random_state: Any = None,
) -> TablePlan:
    """Check a table for :func:`explain_table` and say what the work will be (nothing is computed).

    Every value of every row the model reads is checked, not only those of the chosen rows:
    infinity anywhere, and a missing value where the model does not accept one, is refused
    naming the column and the row's position. Parameters as :func:`explain_table`.
    """
    from trustlab.data.tables import require_columns  # importing trustlab.data loads pandas

    if not hasattr(data, "columns"):
        raise InputError.bad("data", "a pandas DataFrame", data)
    max_order = check_positive_int(max_order, "max_order")
    transform, estimator = split_pipeline(model)
    ensemble = as_tree_ensemble(estimator)
    frame = data.copy(deep=False)
    frame.columns = [str(c) for c in frame.columns]
    if frame.columns.has_duplicates:  # frame[name] would be a table, not a column
        raise InputError.bad("data", "distinct column names", list(frame.columns))
    if label is not None:
        require_columns(frame, {"label": str(label)})
    for column in exclude:
        require_columns(frame, {"exclude": str(column)})
    dropped = {str(c): "exclude" for c in exclude}
    if label is not None:
        dropped[str(label)] = "label"
    inputs, from_model = _input_columns(model, transform, ensemble, frame, dropped)
    values = _numeric_values(frame, inputs, transform is None)
    if transform is not None:
        # a Pipeline fitted on an array gets an array (scikit-learn warns at named columns)
        given = frame[inputs] if from_model else dense_rows(frame[inputs], "data")  # pd.NA: NaN
        given = given.to_numpy() if hasattr(given, "to_numpy") and not from_model else given
        values = transform_rows(transform, given, "data")
    names = _feature_names(ensemble, transform, inputs, values.shape[1])
    _check_values(values, names, ensemble, transform is not None)
    n = len(frame)
    chosen = _positions(rows, n, "rows")
    if chosen is not None:  # a repeated row was explained (and written) twice
        chosen = _distinct(chosen, "rows")
    background = _background(background_rows, background_size, n, random_state)
    if features is not None:
        index = resolve_features(features, names, "features")
        _check_observed(values[background][:, index], [names[j] for j in index])
        features = tuple(names[j] for j in index)
    return TablePlan(
        model=estimator,
        feature_names=names,
        input_columns=tuple(inputs),
        unused_columns=tuple(c for c in frame.columns if c not in inputs),
        names_from_model=from_model,
        pipeline=transform is not None,
        rows=np.arange(n) if chosen is None else chosen,
        background_rows=background,
        n_table_rows=n,
        n_trees=len(ensemble.trees),
        features=features,
        max_order=max_order,
        values=values,
    )


def explain_table(
    model: Any,
    data: Any,
    *,
    label: str | None = None,
    exclude: Sequence[str] = (),
    rows: Any = None,
    background_rows: Any = None,
    background_size: int | None = None,
    features: Sequence[str] | None = None,
    max_order: int = 2,
    random_state: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> Explanation:
    """Explain a fitted tree model on the rows of a table (what ``trustlab explain fastpd`` does).

    Parameters
    ----------
    model : fitted tree model (see :meth:`FastPD.supports`), or a Pipeline whose last step is one
        A Pipeline is explained through its transform: the features are its output columns.
    data : pandas.DataFrame
        Holds the model's input columns: by name when the model stores its feature names (other
        columns, such as the label, are left out), else every column but ``label`` and
        ``exclude``. Without a Pipeline they must be numeric.
    label : str, optional
        The label column, left out of the features.
    exclude : sequence of str
        Further columns that are not features; needed only when the model does not store its
        feature names.
    rows : None, slice, sequence of int or boolean mask
        The rows to explain, by position, each at most once (for a file: data rows counted from 0
        after the header). Default: every row.
    background_rows : None, slice, sequence of int or boolean mask
        The background rows, by position, each at most once. Default: ``background_size`` rows drawn at random
        (without replacement, seeded by ``random_state``; all rows when there are fewer).
    background_size : int, optional
        Default :data:`DEFAULT_BACKGROUND_SIZE` (1000). Not with ``background_rows``.
    features : sequence of str, optional
        Features to draw PD curves of (default: the three with the largest mean |SHAP|).
    max_order : int, default 2
        Largest component order in the importance.
    random_state : None, int or numpy Generator
        Draws the background.
    progress : callable, optional
        ``progress(rows_done, n_rows)`` after each batch of explained rows.

    Returns
    -------
    Explanation
        Its ``shap_table()`` has a ``row`` column: the positions of the explained rows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from trustlab.explain import explain_table
    >>> rng = np.random.default_rng(0)
    >>> table = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    >>> table["y"] = table.a * table.b
    >>> model = RandomForestRegressor(10, max_depth=4).fit(table[["a", "b", "c"]], table.y)
    >>> explanation = explain_table(model, table, rows=slice(0, 50), background_size=100)
    >>> explanation.importance.n_rows, explanation.n_background
    (50, 100)
    >>> list(explanation.shap_table().columns)
    ['row', 'a', 'b', 'c']
    """
    check_progress(progress)
    plan = plan_table(
        model,
        data,
        label=label,
        exclude=exclude,
        rows=rows,
        background_rows=background_rows,
        background_size=background_size,
        features=features,
        max_order=max_order,
        random_state=random_state,
    )
    return plan.explain(progress=progress)


def _input_columns(
    model: Any, transform: Any, ensemble: Any, frame: Any, dropped: dict[str, str]
) -> tuple[list[str], bool]:
    """The table columns the model reads, and whether the model named them.

    ``dropped`` maps the columns that are not features to the argument that named them.
    """
    if transform is not None:
        known = getattr(model, "feature_names_in_", None)
        n_inputs = getattr(model, "n_features_in_", None)
    else:
        known, n_inputs = ensemble.feature_names, ensemble.n_features
    if known is not None:
        known = [str(n) for n in known]
        for column, option in dropped.items():
            if column in known:
                raise InputError(
                    f"{option}: expected a column that is not one of the model's features, got "
                    f"{column!r}, which the model reads",
                    argument=option,
                )
        missing = [n for n in known if n not in frame.columns]
        if missing:
            shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
            raise InputError(
                f"data: expected the model's feature columns ({', '.join(known[:20])}), got a "
                f"table without {shown}",
                argument="data",
            )
        return known, True
    inputs = [c for c in frame.columns if c not in dropped]
    if n_inputs is not None and len(inputs) != n_inputs:
        extra = len(inputs) - n_inputs
        hint = (
            "name the label with --label (label= in Python) and any other column that is not a "
            "feature with --exclude (exclude=[...])"
            if extra > 0
            else "the table lacks some of the model's columns"
        )
        raise InputError(
            f"data: expected {n_inputs} feature columns (the model's), got {len(inputs)}: "
            f"{', '.join(inputs[:20])}; the model does not store its feature names, so {hint}",
            argument="data",
        )
    return inputs, False


def _numeric_values(frame: Any, inputs: list[str], need_numbers: bool) -> np.ndarray:
    """The input columns as floats (checked for infinity); a Pipeline may take any column."""
    from pandas.api.types import CategoricalDtype, is_bool_dtype, is_numeric_dtype

    if len(frame) == 0:  # a header alone: its columns are read as text, not numbers
        raise InputError.bad("data", "at least one row under the header", "none")
    frame = frame[inputs].copy(deep=False)
    for c in inputs:  # a category of numbers is its numbers (as a Parquet file read back)
        if isinstance(frame[c].dtype, CategoricalDtype):
            if is_numeric_dtype(frame[c].cat.categories) or is_bool_dtype(frame[c].cat.categories):
                frame[c] = frame[c].astype(np.float64)
    text = [c for c in inputs if not (is_numeric_dtype(frame[c]) or is_bool_dtype(frame[c]))]
    if text and need_numbers:
        kinds = ", ".join(f"{c!r} ({frame[c].dtype})" for c in text[:10])
        raise InputError(
            f"data: expected numeric feature columns, got {len(text)} that are not: {kinds}; "
            "encode them as numbers before fitting the model, or explain a Pipeline whose "
            "transform encodes them",
            argument="data",
        )
    numeric = [c for c in inputs if c not in text]
    values = frame[numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    _refuse_inf(values, numeric, "")
    return values


def _feature_names(ensemble: Any, transform: Any, inputs: list[str], n: int) -> tuple[str, ...]:
    if transform is not None:
        names = transformed_names(transform, n)
        if names is None and ensemble.feature_names is not None:
            names = tuple(ensemble.feature_names)
        return names if names is not None else tuple(f"x{j}" for j in range(n))
    return tuple(inputs)


def _refuse_inf(values: np.ndarray, names: Sequence[str], what: str) -> None:
    bad = np.isinf(values)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        word = "inf" if values[row, col] > 0 else "-inf"
        raise InputError(
            f"data: expected finite values, got {word}{what} in column {names[col]!r} at row "
            f"{row} ({_WHERE}; {int(bad.sum())} infinite value(s) in all)",
            argument="data",
        )


def _check_values(values: np.ndarray, names: Sequence[str], ensemble: Any, pipeline: bool) -> None:
    """Every row the model would see: no infinity (nor a value its float32 cast makes one), no
    NaN unless the model routes it."""
    if values.shape[0] == 0:
        raise InputError.bad("data", "at least one row", "an empty table")
    if values.shape[1] != ensemble.n_features:
        raise InputError.bad(
            "data", f"{ensemble.n_features} feature columns after the pipeline's transform", values
        )
    if pipeline:
        _refuse_inf(values, names, " from the pipeline's transform")
    big = beyond_input_dtype(values, ensemble.input_dtype)
    if big is not None:
        row, col = big
        raise InputError(
            f"data: expected values the model can read ({ensemble.model_name} reads float32: "
            f"|x| <= 3.4e38), got {values[row, col]:g} in column {names[col]!r} at row {row} "
            f"({_WHERE})",
            argument="data",
        )
    missing = np.isnan(values)
    if not ensemble.allows_missing and missing.any():
        row, col = (int(i) for i in np.argwhere(missing)[0])
        made = " after the pipeline's transform" if pipeline else ""
        raise InputError(
            f"data: expected no missing values ({ensemble.model_name} does not accept NaN), got "
            f"NaN{made} in column {names[col]!r} at row {row} ({_WHERE}; {int(missing.sum())} "
            "in all); impute them or drop those rows",
            argument="data",
        )


def _check_observed(values: np.ndarray, names: Sequence[str]) -> None:
    """A PD curve's grid is drawn from the background: each chosen feature needs a value there
    (the same refusal as :meth:`FastPD.explain`, made before any work)."""
    for j, name in enumerate(names):
        if np.isnan(values[:, j]).all():
            raise InputError(
                f"features: expected features with values in the background (a default PD grid "
                f"is drawn from them), got {name!r}, missing (NaN) in all {len(values)} "
                "background rows; choose another feature or other background rows",
                argument="features",
            )


def _positions(value: Any, n: int, name: str) -> np.ndarray | None:
    """Row positions from None (None), a slice, a boolean mask or integers; checked."""
    if value is None:
        return None
    if isinstance(value, slice):
        ids = np.arange(n)[value]
    else:
        arr = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
        if arr.dtype == bool:
            if arr.shape != (n,):
                raise InputError.bad(name, f"a boolean mask of {n} rows", arr)
            ids = np.flatnonzero(arr)
        elif arr.ndim == 1 and (arr.dtype.kind in "iu" or arr.size == 0):
            ids = arr.astype(np.int64)
            outside = ids[(ids < 0) | (ids >= n)]
            if outside.size:
                raise InputError(
                    f"{name}: expected row positions in [0, {n}) (the table has {n} rows, "
                    f"{_WHERE}), got {int(outside[0])}",
                    argument=name,
                )
        else:
            raise InputError.bad(name, "row positions (integers), a slice or a boolean mask", arr)
    if ids.size == 0:
        raise InputError.bad(name, "at least one row", "none")
    return ids


def _distinct(ids: np.ndarray, name: str) -> np.ndarray:
    """``ids`` when no row is in it twice; else refused naming the first repeated row."""
    values, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise InputError(
            f"{name}: expected distinct rows, got row {int(values[counts > 1][0])} "
            f"more than once ({int((counts > 1).sum())} repeated row(s) in all)",
            argument=name,
        )
    return ids


def _background(
    background_rows: Any, background_size: int | None, n: int, random_state: Any
) -> np.ndarray:
    rng = check_random_state(random_state)
    if background_rows is not None:
        if background_size is not None:
            raise InputError(
                "background_rows: expected either background rows or a background size, got both",
                argument="background_rows",
            )
        # a repeated row would weigh twice in every PD average
        return _distinct(_positions(background_rows, n, "background_rows"), "background_rows")
    size = DEFAULT_BACKGROUND_SIZE if background_size is None else background_size
    size = check_positive_int(size, "background_size")
    return np.arange(n) if n <= size else np.sort(rng.choice(n, size=size, replace=False))

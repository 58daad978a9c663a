"""Explain a tree model on a table: its feature columns, a drawn background and drawn rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_random_state
from trustlab.errors import InputError
from trustlab.explain.fastpd._trees import as_tree_ensemble
from trustlab.explain.fastpd.explainer import FastPD
from trustlab.explain.fastpd.results import Explanation

__all__ = ["explain_table"]


def explain_table(
    model: Any,
    data: Any,
    *,
    exclude: Sequence[str] = (),
    background_size: int = 1000,
    eval_size: int = 1000,
    features: Sequence[str] | None = None,
    max_order: int = 2,
    random_state: Any = None,
) -> Explanation:
    """Explain a fitted tree model on the rows of a table (what ``trustlab explain fastpd`` does).

    The background (``background_size`` rows) and the explained rows (``eval_size``) are drawn
    without replacement from ``data`` (all its rows when it has fewer), background first.

    Parameters
    ----------
    model : fitted tree model (see :meth:`FastPD.supports`)
    data : pandas.DataFrame
        Holds the model's feature columns: by name when the model stores its feature names,
        else every column but those in ``exclude``. They must be numeric.
    exclude : sequence of str
        Columns that are not features (e.g. the label); needed only when the model does not
        store its feature names.
    background_size, eval_size : int
    features : sequence of str, optional
        Features to draw PD curves of (default: the three with the largest mean |SHAP|).
    max_order : int, default 2
        Largest component order in the importance.
    random_state : None, int or numpy Generator
        Draws the rows.

    Returns
    -------
    Explanation

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from trustlab.explain import explain_table
    >>> rng = np.random.default_rng(0)
    >>> table = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    >>> table["y"] = table.a * table.b
    >>> model = RandomForestRegressor(10, max_depth=4).fit(table[["a", "b", "c"]], table.y)
    >>> explanation = explain_table(model, table, background_size=100, eval_size=50)
    >>> explanation.importance.n_rows, explanation.n_background
    (50, 100)
    """
    background_size = check_positive_int(background_size, "background_size")
    eval_size = check_positive_int(eval_size, "eval_size")
    rng = check_random_state(random_state)
    names, X = _feature_table(model, data, list(exclude))
    background = X[_draw(len(X), background_size, rng)]
    rows = X[_draw(len(X), eval_size, rng)]
    explainer = FastPD(model, feature_names=names).fit(background)
    return explainer.explain(rows, features=features, max_order=max_order)


def _feature_table(model: Any, frame: Any, exclude: list[str]) -> tuple[list[str], np.ndarray]:
    """The model's feature columns (by its stored names when it has them) as a float array."""
    from trustlab.data.tables import require_columns  # importing trustlab.data loads pandas

    if not hasattr(frame, "columns"):
        raise InputError.bad("data", "a pandas DataFrame", frame)
    ensemble = as_tree_ensemble(model)
    for column in exclude:
        require_columns(frame, {"exclude": column})
    if ensemble.feature_names is not None:
        names = list(ensemble.feature_names)
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise InputError.bad("data", f"the model's feature columns {names}", list(frame))
    else:
        names = [str(c) for c in frame.columns if c not in exclude]
        if len(names) != ensemble.n_features:
            raise InputError(
                f"data: expected {ensemble.n_features} feature columns (the model's), got "
                f"{len(names)}: {', '.join(names[:20])}; name the other columns with --exclude "
                "(exclude=[...] in Python)",
                argument="data",
            )
    from pandas.api.types import is_numeric_dtype

    text = [n for n in names if not is_numeric_dtype(frame[n])]
    if text:
        raise InputError.bad("data", "numeric feature columns", f"non-numeric {text}")
    return names, frame[names].to_numpy(dtype=np.float64)


def _draw(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.arange(n) if n <= size else np.sort(rng.choice(n, size=size, replace=False))

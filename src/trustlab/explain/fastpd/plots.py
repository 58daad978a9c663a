"""SHAP summary plots: a beeswarm of the SHAP values or bars of their mean absolute value."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_positive_int
from trustlab._results import new_axes
from trustlab.errors import InputError

__all__ = ["plot_shap_summary"]


def plot_shap_summary(
    values: Any,
    X: Any = None,
    feature_names: Sequence[str] | None = None,
    *,
    kind: str = "beeswarm",
    output: int | None = None,
    output_names: Sequence[str] | None = None,
    max_display: int = 10,
    ax: Any = None,
) -> Any:
    """A SHAP summary plot: a beeswarm (dots coloured by feature value) or mean |SHAP| bars.

    Parameters
    ----------
    values : array (n, d) or (n, d, n_outputs)
        SHAP values, as :meth:`FastPD.shap_values` returns them.
    X : array-like (n, d), optional
        The explained rows; colours the beeswarm by feature value (a missing value, NaN, in
        grey).
    kind : "beeswarm" or "bar"
        For several outputs, ``"bar"`` stacks the outputs; ``"beeswarm"`` shows ``output``
        (default: the output with the largest mean |SHAP|).
    output : int, optional
        The output (its index) the beeswarm shows.
    output_names : sequence of str, optional
        Names of the outputs, for the legend (e.g. ``FastPD.output_names_``).
    max_display : int or None, default 10
        How many features to show, most important first (None: all).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.explain.fastpd import plot_shap_summary
    >>> ax = plot_shap_summary(np.random.default_rng(0).normal(size=(50, 3)), kind="bar")
    >>> ax.get_xlabel()
    'mean |SHAP|'
    """
    phi = as_float_array(values, "values")
    if phi.ndim not in (2, 3):
        raise InputError.bad("values", "an array of shape (n, d) or (n, d, n_outputs)", phi)
    if phi.ndim == 2:
        phi = phi[:, :, None]
    n, d, n_out = phi.shape
    names = (
        [f"x{j}" for j in range(d)] if feature_names is None else [str(f) for f in feature_names]
    )
    if len(names) != d:
        raise InputError.bad("feature_names", f"{d} names", list(names))
    if kind not in ("beeswarm", "bar"):
        raise InputError.bad("kind", "'beeswarm' or 'bar'", kind)
    if max_display is not None:  # 0 drew nothing and crashed, -1 dropped a feature, 2.5 TypeError
        max_display = check_positive_int(max_display, "max_display")
    outputs = [f"output {o}" for o in range(n_out)] if output_names is None else output_names
    if len(outputs) != n_out:
        raise InputError.bad("output_names", f"{n_out} names", list(outputs))
    mean_abs = np.abs(phi).mean(axis=0)  # (d, n_out)
    order = np.argsort(-mean_abs.sum(axis=1), kind="stable")[:max_display][::-1]
    ax = new_axes(ax, (6, 0.35 * len(order) + 1.2))
    labels = [names[j] for j in order]
    if kind == "bar":
        left = np.zeros(len(order))
        for o in range(n_out):
            ax.barh(labels, mean_abs[order, o], left=left, label=str(outputs[o]))
            left += mean_abs[order, o]
        if n_out > 1:
            ax.legend(fontsize="small")
        ax.set_xlabel("mean |SHAP|")
        return ax
    if output is None:
        o = int(np.argmax(mean_abs.sum(axis=0)))
    elif isinstance(output, (int, np.integer)) and not isinstance(output, bool):
        o = int(output)
    else:  # int() would cut 1.7 to 1 and give 'a' a raw ValueError
        o = -1
    if not 0 <= o < n_out:
        raise InputError.bad("output", f"an index below {n_out}", output)
    colours = None
    if X is not None:
        Xv = as_float_array(X, "X", shape=(n, d), allow_nan=True)
        with warnings.catch_warnings():  # a feature missing in every row: NaN bounds, grey dots
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.nanpercentile(Xv, 5, axis=0), np.nanpercentile(Xv, 95, axis=0)
        colours = np.clip((Xv - low) / np.where(high > low, high - low, 1.0), 0, 1)
    # NaN colours (missing feature values) would be the colour map's transparent "bad" colour
    from matplotlib import colormaps

    cmap = colormaps["coolwarm"].with_extremes(bad="tab:gray")
    for row, j in enumerate(order):
        x = phi[:, j, o]
        y = row + _swarm_offsets(x)
        c = "tab:blue" if colours is None else colours[:, j]
        points = ax.scatter(x, y, c=c, s=8, cmap=cmap, vmin=0, vmax=1, linewidths=0)
    ax.set_yticks(range(len(order)), labels)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("SHAP value" + ("" if n_out == 1 else f" ({outputs[o]})"))
    if colours is not None:
        ax.figure.colorbar(points, ax=ax, label="feature value (low to high)", ticks=[])
    return ax


def _swarm_offsets(x: np.ndarray, bins: int = 60, width: float = 0.4) -> np.ndarray:
    """Deterministic vertical offsets that stack points falling in the same horizontal bin."""
    if len(x) == 0:
        return np.zeros(0)
    span = float(x.max() - x.min()) or 1.0
    bin_of = np.floor((x - x.min()) / span * (bins - 1)).astype(int)
    order = np.lexsort((x, bin_of))
    rank = np.empty(len(x), dtype=int)
    _, starts = np.unique(bin_of[order], return_index=True)
    position = np.arange(len(x)) - np.repeat(starts, np.diff(np.append(starts, len(x))))
    rank[order] = position
    crowd = max(int(np.bincount(bin_of).max()), 1)
    sign = np.where(rank % 2 == 0, 1.0, -1.0)
    return sign * np.ceil(rank / 2) * min(width / crowd * 2, 0.08)

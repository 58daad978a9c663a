"""FastPD's results: the decomposition, PD curves, global importance and a whole explanation.

Each is a frozen dataclass deriving from :class:`trustlab._results.Result`: ``to_dict()`` (JSON),
``summary()`` (text) and ``plot(ax=None)`` (a matplotlib Axes). :class:`Explanation` bundles what
``trustlab explain fastpd`` writes: SHAP values, importance, the mean output and PD curves.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from trustlab._checks import check_positive_int
from trustlab._paths import file_part
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.explain.fastpd._features import TIMES, resolve_features, resolve_output, subset_label
from trustlab.explain.fastpd.plots import plot_shap_summary

__all__ = ["Decomposition", "PartialDependence", "Importance", "Explanation"]


def _by_size(items: dict) -> list:
    """(subset, values) pairs, largest summed value first."""
    return sorted(items.items(), key=lambda kv: -float(np.sum(kv[1])))


def _bars(ax: Any, items: list, names, xlabel: str) -> None:
    """Horizontal bars of mean |m_S| per component, largest on top."""
    labels = [subset_label(s, names, TIMES) for s, _ in items][::-1]
    ax.barh(labels, [float(np.sum(v)) for _, v in items][::-1], color="tab:blue")
    ax.set_xlabel(xlabel)


@dataclass(frozen=True)
class Decomposition(Result):
    """Components m_S of the functional decomposition at the evaluation rows.

    Attributes
    ----------
    components : dict
        Feature-index tuple (sorted) -> array (n,) for one output or (n, n_outputs). The empty
        tuple holds m_empty, the mean prediction on the background. A subset that is absent is
        exactly zero: no root-to-leaf path in the ensemble uses all of its features.
    feature_names, output_names : tuple of str
    output_kind : str
        What is decomposed, e.g. ``"probability"`` or ``"log-odds"``.
    max_order : int
        Largest subset size computed.
    complete : bool
        True when ``max_order`` reaches the widest path, so the components sum to the prediction.
    n_background : int
    """

    components: dict[tuple[int, ...], np.ndarray]
    feature_names: tuple[str, ...]
    output_names: tuple[str, ...]
    output_kind: str
    max_order: int
    complete: bool
    n_background: int

    @property
    def n_rows(self) -> int:
        return int(self.components[()].shape[0])

    def component(self, *features: int | str) -> np.ndarray:
        """m_S for the given features (names or indices, any order); zeros when absent.

        Raises InputError for a subset larger than ``max_order`` of a truncated decomposition.
        """
        key = tuple(sorted(resolve_features(features, self.feature_names, "features")))
        if key in self.components:
            return self.components[key]
        self._check_order(key)
        return np.zeros_like(self.components[()])

    def _check_order(self, key: Any) -> None:
        """A subset above max_order of a truncated decomposition was not computed."""
        if not self.complete and len(key) > self.max_order:
            raise InputError.bad("features", f"at most max_order={self.max_order} features", key)

    def prediction(self) -> np.ndarray:
        """The sum of all components: the model output when ``complete``."""
        return sum(self.components.values())

    def pd_function(self, *features: int | str) -> np.ndarray:
        """v_U = sum of m_V over the subsets V of U (needs |U| <= max_order)."""
        key = set(resolve_features(features, self.feature_names, "features"))
        self._check_order(key)
        return sum(v for s, v in self.components.items() if set(s) <= key)

    def shap_values(self) -> np.ndarray:
        """phi_j = sum over S containing j of m_S / |S|; exact SHAP values when ``complete``."""
        first = self.components[()]
        out = np.zeros((first.shape[0], len(self.feature_names), *first.shape[1:]))
        for subset, values in self.components.items():
            for j in subset:
                out[:, j] += values / len(subset)
        return out

    def importance(self) -> dict[tuple[int, ...], np.ndarray]:
        """Mean |m_S| over the rows for every non-empty component (per output)."""
        return {s: np.abs(v).mean(axis=0) for s, v in self.components.items() if s}

    def _dict_items(self) -> dict[str, Any]:
        names = self.feature_names
        return {
            "method": "fastpd",
            "feature_names": names,
            "output_names": self.output_names,
            "output_kind": self.output_kind,
            "max_order": self.max_order,
            "complete": self.complete,
            "n_rows": self.n_rows,
            "n_background": self.n_background,
            "components": {subset_label(s, names): v for s, v in self.components.items()},
            "importance": {subset_label(s, names): v for s, v in self.importance().items()},
        }

    def summary(self) -> str:
        top = _by_size(self.importance())[:8]
        lines = [
            f"FastPD decomposition of the {self.output_kind}: {self.n_rows} rows, "
            f"{len(self.components) - 1} components up to order {self.max_order}"
            + (" (complete)" if self.complete else " (truncated)")
            + f", background {self.n_background} rows",
            "largest components (mean |m_S|):",
        ]
        lines += [
            f"  {subset_label(s, self.feature_names, TIMES)}: {np.sum(v):.4g}" for s, v in top
        ]
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, top: int = 15) -> Any:
        """Horizontal bars of the largest components' mean |m_S| (summed over outputs)."""
        top = check_positive_int(top, "top")  # -1 dropped a bar, 2.5 a raw TypeError
        ax = new_axes(ax, (6, 0.3 * top + 1))
        items = _by_size(self.importance())[:top]
        _bars(ax, items, self.feature_names, f"mean |m_S| ({self.output_kind})")
        ax.set_title("FastPD components")
        return ax


@dataclass(frozen=True)
class PartialDependence(Result):
    """An interventional PD function on a grid of one or two features.

    ``values`` has shape (g,) + (n_outputs,) for one feature, (g1, g2, n_outputs) for two:
    ``m_empty + m_j`` (resp. ``+ m_k + m_jk``) on the grid, exactly the background average.
    """

    features: tuple[str, ...]
    grid: tuple[np.ndarray, ...]
    values: np.ndarray
    output_names: tuple[str, ...]
    output_kind: str
    n_background: int

    figure_size: ClassVar[tuple[float, float]] = (5.0, 3.5)

    def summary(self) -> str:
        low, high = float(self.values.min()), float(self.values.max())
        return (
            f"partial dependence of the {self.output_kind} on {' and '.join(self.features)}: "
            f"{'x'.join(str(len(g)) for g in self.grid)} grid points, range [{low:.4g}, {high:.4g}]"
        )

    def plot(self, ax: Any = None, *, output: int | str | None = None) -> Any:
        """A line per output (one feature) or a filled contour of one output (two features; a
        line when one of them has a single grid value). Missing (NaN) grid values, which a model
        that routes missing values can be evaluated at, have no place on an axis and are not
        drawn; they stay in ``values`` and ``to_dict()``."""
        ax = new_axes(ax, self.figure_size)
        keep = [~np.isnan(g) for g in self.grid]
        if not all(k.any() for k in keep):
            raise InputError.bad("grid", "a value that is not missing to plot", self.grid)
        if not all(k.all() for k in keep):
            kept = replace(
                self,
                grid=tuple(g[k] for g, k in zip(self.grid, keep, strict=True)),
                values=self.values[np.ix_(*keep)] if len(keep) == 2 else self.values[keep[0]],
            )
            return kept.plot(ax=ax, output=output)
        if len(self.features) == 1:
            outputs = range(len(self.output_names)) if output is None else [self._output(output)]
            for o in outputs:
                ax.plot(self.grid[0], self.values[:, o], marker=".", label=self.output_names[o])
            if len(outputs) > 1:
                ax.legend(fontsize="small")
            ax.set_xlabel(self.features[0])
            ax.set_ylabel(
                self._label(outputs[0]) if len(outputs) == 1 else f"PD ({self.output_kind})"
            )
        elif min(len(g) for g in self.grid) == 1:  # one value of a feature: a contour needs 2
            o = self._output(0 if output is None else output)
            fixed, free = (0, 1) if len(self.grid[0]) == 1 else (1, 0)
            line = self.values[0, :, o] if fixed == 0 else self.values[:, 0, o]
            label = f"{self.features[fixed]} = {float(self.grid[fixed][0]):.4g}"
            ax.plot(self.grid[free], line, marker=".", label=label)
            ax.legend(fontsize="small")
            ax.set_xlabel(self.features[free])
            ax.set_ylabel(self._label(o))
        else:
            o = self._output(0 if output is None else output)
            mesh = ax.contourf(self.grid[1], self.grid[0], self.values[:, :, o], levels=12)
            ax.figure.colorbar(mesh, ax=ax, label=self._label(o))
            ax.set_xlabel(self.features[1])
            ax.set_ylabel(self.features[0])
        ax.set_title("partial dependence")
        return ax

    def _output(self, output: int | str) -> int:
        return resolve_output(output, self.output_names)

    def _label(self, o: int) -> str:
        """``PD (log-odds of class 1)``: what is drawn and of which output (a binary boosting
        model has one output, its positive class's log-odds)."""
        kind, name = self.output_kind, self.output_names[o]
        if name in kind:  # "prediction", "raw score": the kind says it
            return f"PD ({kind})"
        if any(word in kind for word in ("log-odds", "probability", "logit")):
            return f"PD ({kind} of class {name})"
        return f"PD ({kind}, {name})"


@dataclass(frozen=True)
class Importance(Result):
    """Global importance: mean |SHAP| per feature and mean |m_S| per component.

    ``shap`` has shape (n_features, n_outputs); ``components`` maps non-empty feature-index
    tuples to arrays (n_outputs,). ``rounding_level`` is the mean |m_jk| (summed over outputs)
    at or below which a pair is rounding error of the model's outputs, not an interaction
    (:meth:`FastPD.importance` sets it from the model's output scale, see the docs):
    :meth:`top_interactions` leaves such pairs out.
    """

    feature_names: tuple[str, ...]
    output_names: tuple[str, ...]
    output_kind: str
    shap: np.ndarray
    components: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)
    n_rows: int = 0
    max_order: int = 0
    rounding_level: float = 0.0

    @classmethod
    def from_values(
        cls, shap_values: np.ndarray, decomposition: Decomposition, rounding_level: float = 0.0
    ) -> Importance:
        """Mean absolute SHAP values and components over the same rows.

        Parameters
        ----------
        shap_values : array (n, d) or (n, d, n_outputs), from :meth:`FastPD.shap_values`
        decomposition : Decomposition of the same rows, from :meth:`FastPD.decompose`
        rounding_level : float, default 0
            Pairs at or below it are left out of :meth:`top_interactions`.
        """
        n = decomposition.n_rows
        phi = np.asarray(shap_values, dtype=np.float64)
        if phi.shape[:2] != (n, len(decomposition.feature_names)):
            raise InputError.bad(
                "shap_values", f"shape ({n}, {len(decomposition.feature_names)}, ...)", phi
            )
        return cls(
            feature_names=decomposition.feature_names,
            output_names=decomposition.output_names,
            output_kind=decomposition.output_kind,
            shap=np.abs(phi.reshape(n, phi.shape[1], -1)).mean(axis=0),
            components={s: np.atleast_1d(v) for s, v in decomposition.importance().items()},
            n_rows=n,
            max_order=decomposition.max_order,
            rounding_level=float(rounding_level),
        )

    def top_features(self, k: int = 10) -> list[str]:
        """Feature names by mean |SHAP| (summed over outputs), largest first."""
        k = check_positive_int(k, "k")  # -1 silently dropped the last feature
        order = np.argsort(-self.shap.sum(axis=1), kind="stable")[:k]
        return [self.feature_names[j] for j in order]

    def top_interactions(self, k: int = 10) -> list[tuple[tuple[str, str], float]]:
        """Feature pairs by mean |m_jk| (summed over outputs), largest first; pairs at or below
        ``rounding_level`` (an additive model's rounding error, or exactly zero) are left out."""
        k = check_positive_int(k, "k")  # -1 silently dropped the weakest pair
        pairs = [(s, float(np.sum(v))) for s, v in self.components.items() if len(s) == 2]
        pairs = [(s, v) for s, v in pairs if v > self.rounding_level]
        pairs.sort(key=lambda sv: -sv[1])
        return [((self.feature_names[s[0]], self.feature_names[s[1]]), v) for s, v in pairs[:k]]

    def _dict_items(self) -> dict[str, Any]:
        names = self.feature_names
        return {
            "feature_names": names,
            "output_names": self.output_names,
            "output_kind": self.output_kind,
            "n_rows": self.n_rows,
            "max_order": self.max_order,
            "mean_abs_shap": {n: self.shap[j] for j, n in enumerate(names)},
            "mean_abs_component": {subset_label(s, names): v for s, v in self.components.items()},
            "rounding_level": self.rounding_level,
            "top_interactions": [
                {"features": list(p), "mean_abs": v} for p, v in self.top_interactions(10)
            ],
        }

    def summary(self) -> str:
        total = self.shap.sum(axis=1)
        lines = [f"FastPD importance of the {self.output_kind} over {self.n_rows} rows"]
        several = len(self.output_names) > 1  # one output: nothing is summed
        lines.append("mean |SHAP| (summed over outputs):" if several else "mean |SHAP|:")
        for j in np.argsort(-total, kind="stable")[:10]:
            lines.append(f"  {self.feature_names[j]}: {total[j]:.4g}")
        pairs = self.top_interactions(5)
        if pairs:
            summed = ", summed over outputs" if several else ""
            lines.append(f"strongest pairwise interactions (mean |m_jk|{summed}):")
            lines += [f"  {a}{TIMES}{b}: {v:.4g}" for (a, b), v in pairs]
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, kind: str = "shap", top: int = 10) -> Any:
        """Bars of mean |SHAP| per feature (``kind="shap"``) or of mean |m_S| (``"components"``)."""
        if kind not in ("shap", "components"):
            raise InputError.bad("kind", "'shap' or 'components'", kind)
        top = check_positive_int(top, "top")  # -1 dropped a bar, 2.5 a raw TypeError
        ax = new_axes(ax, (6, 0.3 * top + 1))
        if kind == "shap":
            order = np.argsort(-self.shap.sum(axis=1), kind="stable")[:top][::-1]
            labels = [self.feature_names[j] for j in order]
            left = np.zeros(len(order))
            for o, name in enumerate(self.output_names):
                ax.barh(labels, self.shap[order, o], left=left, label=name)
                left += self.shap[order, o]
            if len(self.output_names) > 1:
                ax.legend(fontsize="small")
            ax.set_xlabel(f"mean |SHAP| ({self.output_kind})")
        else:
            items = _by_size(self.components)[:top]
            _bars(ax, items, self.feature_names, f"mean |m_S| ({self.output_kind})")
        ax.set_title("FastPD importance")
        return ax


@dataclass(frozen=True)
class Explanation(Result):
    """Explained rows: SHAP values, their global importance, the mean output and PD curves.

    Returned by :meth:`FastPD.explain`. Saved (``trustlab explain fastpd --out``) as
    ``result.json`` (:meth:`to_dict`), ``shap_summary.png`` (:meth:`plot`), ``shap_values.csv``,
    ``interactions.csv`` and one ``pd_<feature>.png`` per curve.

    Attributes
    ----------
    importance : Importance
        Mean |SHAP| per feature and mean |m_S| per component over the explained rows.
    expected_value : ndarray (n_outputs,)
        m_empty, the mean output over the background.
    n_background : int
    partial_dependence : tuple of PartialDependence
        One curve per chosen feature.
    shap_values : ndarray (n, d) or (n, d, n_outputs)
    rows : ndarray (n, d)
        The explained rows (they colour the beeswarm).
    row_ids : ndarray (n,) or None
        An id per explained row (``trustlab explain fastpd``: the row's position in the input
        file, counted from 0 after the header); None: 0 .. n-1.
    """

    importance: Importance
    expected_value: np.ndarray
    n_background: int
    partial_dependence: tuple[PartialDependence, ...]
    shap_values: np.ndarray = internal_field()
    rows: np.ndarray = internal_field()
    row_ids: np.ndarray | None = internal_field(default=None)

    figure_name: ClassVar[str] = "shap_summary.png"
    figure_size: ClassVar[tuple[float, float]] = (6.4, 4.8)

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.importance.feature_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.importance.output_names

    def predicted_class_shap(self) -> np.ndarray:
        """(n, d): each row's SHAP values for the output the model predicts for it.

        For several outputs (classes) the one with the largest output; for log-odds the values
        of the predicted class (negated for rows predicted negative); else the one output.
        """
        values = self.shap_values.reshape(self.shap_values.shape[0], len(self.feature_names), -1)
        output = values.sum(axis=1) + self.expected_value
        if values.shape[2] > 1:
            return values[np.arange(len(values)), :, output.argmax(axis=1)]
        if "log-odds" in self.importance.output_kind:  # a scaled log-odds too: negated
            return values[:, :, 0] * np.where(output[:, 0] > 0, 1.0, -1.0)[:, None]
        return values[:, :, 0]

    def shap_table(self):
        """The SHAP values as a DataFrame: first ``row`` (each explained row's id, see
        ``row_ids``; ``row_id`` if a feature is called ``row``), then a column per feature
        (``output:feature`` for several outputs), a row per explained row."""
        import pandas as pd

        names, n = list(self.feature_names), len(self.rows)
        phi = self.shap_values.reshape(n, len(names), -1)
        if phi.shape[2] == 1:
            columns = names
        else:
            columns = [f"{o}:{f}" for o in self.output_names for f in names]
        table = pd.DataFrame(phi.transpose(0, 2, 1).reshape(n, -1), columns=columns)
        ids = np.arange(n) if self.row_ids is None else np.asarray(self.row_ids)
        table.insert(0, "row_id" if "row" in columns else "row", ids)
        return table

    def interaction_table(self):
        """Every computed pair's mean |m_jk| (summed over outputs), strongest first (pairs at
        rounding level too: the table holds what was computed)."""
        import pandas as pd

        names = self.feature_names
        pairs = [
            ((names[s[0]], names[s[1]]), float(np.sum(v)))
            for s, v in self.importance.components.items()
            if len(s) == 2
        ]
        pairs.sort(key=lambda sv: -sv[1])
        return pd.DataFrame(
            [{"feature_1": a, "feature_2": b, "mean_abs_m": v} for (a, b), v in pairs],
            columns=["feature_1", "feature_2", "mean_abs_m"],
        )

    def summary(self) -> str:
        pairs = zip(self.output_names, self.expected_value, strict=True)
        mean = ", ".join(f"{name} {value:.4g}" for name, value in pairs)
        lines = [
            self.importance.summary(),
            f"mean {self.importance.output_kind} over {self.n_background} background rows: " + mean,
        ]
        if self.partial_dependence:
            curves = ", ".join(c.features[0] for c in self.partial_dependence)
            lines.append(f"partial dependence curves: {curves}")
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """The SHAP summary: a beeswarm for one output, stacked mean |SHAP| bars for several."""
        kind = "beeswarm" if len(self.output_names) == 1 else "bar"
        return plot_shap_summary(
            self.shap_values,
            self.rows,
            self.feature_names,
            kind=kind,
            output_names=self.output_names,
            ax=ax,
        )

    def files(self) -> dict[str, Any]:
        """``shap_values.csv``, ``interactions.csv`` and ``pd_<feature>.png`` per curve (a
        feature whose file name would repeat an earlier one's, ignoring case, e.g. ``a/b`` after
        ``a_b``, gets ``pd_a_b-2.png``; a long name is cut to its first 100 bytes)."""
        files: dict[str, Any] = {
            "shap_values.csv": self.shap_table(),
            "interactions.csv": self.interaction_table(),
        }
        for curve in self.partial_dependence:
            stem, number = f"pd_{file_part(curve.features[0])}", 1
            name = f"{stem}.png"
            while name.casefold() in {taken.casefold() for taken in files}:
                number += 1
                name = f"{stem}-{number}.png"
            files[name] = curve.plot
        return files

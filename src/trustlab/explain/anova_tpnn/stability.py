"""How much the components of several fitted models agree: seeds, resamples, model kinds.

ANOVA-TPNN's claim is that its components are unique, so refitting with another seed or on a
resample gives the same curves; :func:`component_stability` measures it for any models with a
``components(X)`` method (the benchmark compares a neural additive model the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._numerics import power_of_2, root_mean_square
from trustlab._results import Result, new_axes
from trustlab.errors import InputError

__all__ = ["ComponentStability", "component_stability"]


@dataclass(frozen=True)
class ComponentStability(Result):
    """How much the components of several fitted models agree on the same rows.

    Attributes
    ----------
    names : tuple of str
    mean_correlation : numpy.ndarray
        Per component, the mean Pearson correlation over all pairs of models (1 = identical
        curves up to scale).
    normalised_variance : numpy.ndarray
        Per component, each model's values divided by their root mean square, then the variance
        across models averaged over the rows (trustlab's version of the paper's stability
        score; 0 = identical up to scale, lower is more stable).
    raw_variance : numpy.ndarray
        The same without the normalisation.
    n_models, n_rows : int
    """

    names: tuple[str, ...]
    mean_correlation: np.ndarray
    normalised_variance: np.ndarray
    raw_variance: np.ndarray
    n_models: int
    n_rows: int

    @property
    def overall_correlation(self) -> float:
        """The mean over components of the mean pairwise correlation, over the components where
        it is defined (NaN when it is defined for none)."""
        defined = self.mean_correlation[~np.isnan(self.mean_correlation)]
        return float(defined.mean()) if len(defined) else float("nan")

    @property
    def n_undefined(self) -> int:
        """Components whose correlation is not defined: constant on these rows in some model."""
        return int(np.isnan(self.mean_correlation).sum())

    def _dict_items(self) -> dict[str, Any]:
        return {
            "components": {
                name: {
                    "mean_correlation": self.mean_correlation[i],
                    "normalised_variance": self.normalised_variance[i],
                    "raw_variance": self.raw_variance[i],
                }
                for i, name in enumerate(self.names)
            },
            "overall_correlation": self.overall_correlation,
            "n_undefined": self.n_undefined,
            "n_models": self.n_models,
            "n_rows": self.n_rows,
        }

    def summary(self) -> str:
        head = f"Component stability over {self.n_models} models and {self.n_rows} rows: "
        undefined = self.n_undefined
        if undefined == len(self.names):
            head += (
                "mean pairwise correlation not defined (every component is constant on these rows)"
            )
        else:
            head += f"mean pairwise correlation {self.overall_correlation:.3f}"
            if undefined:
                head += (
                    f" over {len(self.names) - undefined} of {len(self.names)} components (the "
                    "others are constant on these rows)"
                )
        lines = [head]
        for i, name in enumerate(self.names):
            r = self.mean_correlation[i]
            shown = "not defined (constant on these rows)" if np.isnan(r) else f"{r:.3f}"
            lines.append(
                f"  {name:<30} r = {shown}, normalised variance = {self.normalised_variance[i]:.3g}"
            )
        return "\n".join(lines)

    def plot(self, ax=None):
        """Bars of the mean pairwise correlation per component."""
        ax = new_axes(ax, (6.0, 0.3 * len(self.names) + 1.2))
        ax.barh(list(self.names)[::-1], self.mean_correlation[::-1], color="tab:green")
        defined = self.mean_correlation[~np.isnan(self.mean_correlation)]
        ax.set_xlim(min([0.0, *defined.tolist()]), 1.0)  # an undefined component draws no bar
        ax.set_xlabel("mean pairwise correlation across models")
        ax.set_title(f"Component stability ({self.n_models} models)")
        return ax


def _classes(part: Any) -> list | None:
    """The class labels whose logits a model's components are (None: one output)."""
    classes = getattr(part, "classes", None)
    return None if classes is None else np.asarray(classes).tolist()


def component_stability(models: Sequence[Any], X) -> ComponentStability:
    """Compare the components of several fitted models (different seeds or resamples) on X.

    Parameters
    ----------
    models : sequence of fitted models
        At least 2, each with ``components(X)`` giving the same component names and, for
        classifiers, the same classes (e.g. :class:`ANOVATPNN` fitted with different
        ``random_state``; a resample that misses a class is refused).
    X : array-like or DataFrame
        The rows to compare them on.

    Returns
    -------
    ComponentStability

    Examples
    --------
    >>> import numpy as np
    >>> from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> runs = [ANOVATPNN(order=1, max_epochs=20, random_state=s, n_jobs=1).fit(X, y)
    ...         for s in range(2)]
    >>> component_stability(runs, X).names
    ('x0', 'x1')
    """
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence) or len(models) < 2:
        raise InputError.bad("models", "a sequence of at least 2 fitted models", models)
    parts = [model.components(X) for model in models]
    if len(parts[0].values) < 2:  # a correlation across rows needs two of them
        raise InputError.bad("X", "at least 2 rows", len(parts[0].values))
    names = parts[0].names
    classes = _classes(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        if part.names != names:
            raise InputError.bad(f"models[{i}]", f"the components {list(names)}", list(part.names))
        if _classes(part) != classes:  # a resample without a class has fewer class logits
            raise InputError.bad(f"models[{i}]", f"the classes {classes}", _classes(part))
    n = len(parts[0].values)
    correlation, normalised, raw = [], [], []
    for c in range(len(names)):
        runs = np.stack([p.values[:, c].reshape(-1) for p in parts])  # (R, n * outputs)
        with np.errstate(over="ignore"):  # values past ~1e154: a variance beyond float64, inf
            raw.append(float(runs.var(axis=0).mean()))
        norms = root_mean_square(runs, axis=1)[:, None]  # no overflow in the squares
        with np.errstate(invalid="ignore", divide="ignore"):
            normalised.append(float((runs / norms).var(axis=0).mean()))
            matrix = np.corrcoef(runs / power_of_2(np.abs(runs).max()))  # exact, no overflow
        upper = matrix[np.triu_indices(len(runs), k=1)]
        # a run constant on these rows has no correlation; np.corrcoef gives NaN or, when the
        # mean rounds off the constant, +-1 from the rounding error
        constant = bool((np.ptp(runs, axis=1) == 0).any())
        correlation.append(float("nan") if constant else float(upper.mean()))
    return ComponentStability(
        names, np.asarray(correlation), np.asarray(normalised), np.asarray(raw), len(models), n
    )

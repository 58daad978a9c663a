"""ANOVA-TPNN's results: components at rows, their importance, one component on a grid, and
what a fit did (:class:`ANOVATPNNSummary`) or what a plot draws (:class:`ComponentFigures`).

Each is a frozen dataclass deriving from :class:`trustlab._results.Result`: ``to_dict()`` (JSON),
``summary()`` (text), ``plot(ax=None)`` where a picture helps, and ``files()`` for what
``trustlab explain anova-tpnn`` saves beside ``result.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import numpy as np

from trustlab._numerics import root_mean_square
from trustlab._paths import file_part
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn._encoding import python_value
from trustlab.explain.anova_tpnn._saving import META_FILE, MODEL_FILE, model_files

__all__ = [
    "ComponentValues",
    "ComponentImportance",
    "ComponentGrid",
    "ComponentFigures",
    "ANOVATPNNSummary",
    "PredictionTable",
    "PAIR_SEPARATOR",
    "component_name",
    "component_file",
    "component_files",
]

PAIR_SEPARATOR = " & "
COMPONENTS_FILE = "components.json"
HELD_OUT_FILE = "held_out_rows.csv"


def component_name(features: Sequence[str]) -> str:
    """``"age"`` for a main effect, ``"age & income"`` for a pair."""
    return PAIR_SEPARATOR.join(features)


def component_file(name: str) -> str:
    """The PNG file name of a component: ``component_age.png``, ``component_age__income.png``."""
    return f"component_{file_part(name.replace(PAIR_SEPARATOR, '__'))}.png"  # <= 100 bytes


def component_files(names: Sequence[str]) -> list[str]:
    """:func:`component_file` of each name, made distinct: names that differ only in characters
    a file name does not keep ("price ($)", "price (EUR)") get ``_2``, ``_3``, ... instead of
    overwriting one another."""
    files: list[str] = []
    for name in names:
        file = stem = component_file(name)[: -len(".png")]
        count = 1
        while f"{file}.png" in files:
            count += 1
            file = f"{stem}_{count}"
        files.append(f"{file}.png")
    return files


@dataclass(frozen=True)
class ComponentValues(Result):
    """Every component of a fitted :class:`ANOVATPNN` at some rows.

    Attributes
    ----------
    names : tuple of str
        Component names: the feature name for a main effect, ``"a & b"`` for a pair.
    terms : tuple of tuple of str
        The features of each component.
    values : numpy.ndarray
        ``(n, C)`` for regression (in the target's units) and binary classification (logit of
        the second class); ``(n, C, n_classes)`` class logits for multiclass.
    intercept : float or numpy.ndarray
        beta_0 (one per class for multiclass).
    classes : numpy.ndarray or None
        The class labels for classification.
    """

    names: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    values: np.ndarray = field(repr=False)
    intercept: float | np.ndarray
    classes: np.ndarray | None = None

    def total(self) -> np.ndarray:
        """``intercept + sum of all components``: the model's prediction (regression) or its
        logits (classification), exactly as ``decision_function`` returns them."""
        return self.intercept + self.values.sum(axis=1)

    def __getitem__(self, name: str | Sequence[str]) -> np.ndarray:
        """The values of one component, by name or by its features (in any order)."""
        return self.values[:, self.index(name)]

    def index(self, name: str | Sequence[str]) -> int:
        if isinstance(name, str) and name in self.names:
            return self.names.index(name)
        if not isinstance(name, str) and isinstance(name, Sequence):
            wanted = frozenset(map(str, name))
            for i, term in enumerate(self.terms):
                if frozenset(term) == wanted:
                    return i
        raise InputError.bad("component", "one of " + ", ".join(map(repr, self.names)), name)

    def summary(self) -> str:
        flat = self.values.reshape(len(self.values), len(self.names), -1)
        spread = root_mean_square(flat, axis=(0, 2))  # no overflow in the squares
        lines = [f"{len(self.names)} components at {len(self.values)} rows (root mean square):"]
        order = np.argsort(-spread)
        lines += [f"  {self.names[i]:<30} {spread[i]:.4g}" for i in order[:10]]
        return "\n".join(lines)


@dataclass(frozen=True)
class ComponentImportance(Result):
    """How much each component varies over the data: its root mean square (a main effect's
    standard deviation on the training rows; an interaction sums to zero over the product of
    the marginals, not over the rows, so where its features are dependent its mean is not 0).

    Attributes
    ----------
    names : tuple of str
    terms : tuple of tuple of str
    importance : numpy.ndarray
        ``(C,)``; for multiclass the root mean square over rows and classes.
    per_class : numpy.ndarray or None
        ``(C, n_classes)`` for multiclass.
    classes : numpy.ndarray or None
    n_rows : int
        The rows it was measured on.
    """

    names: tuple[str, ...]
    terms: tuple[tuple[str, ...], ...]
    importance: np.ndarray
    per_class: np.ndarray | None
    classes: np.ndarray | None
    n_rows: int

    def ranked(self) -> list[tuple[str, float]]:
        """``(name, importance)`` pairs, most important first."""
        order = np.argsort(-self.importance, kind="stable")
        return [(self.names[i], float(self.importance[i])) for i in order]

    def top(self, n: int = 5) -> list[str]:
        """The names of the ``n`` most important components."""
        return [name for name, _ in self.ranked()[:n]]

    def _dict_items(self) -> dict[str, Any]:
        return {
            "components": [
                {
                    "name": self.names[i],
                    "features": list(self.terms[i]),
                    "importance": self.importance[i],
                    **({} if self.per_class is None else {"per_class": self.per_class[i]}),
                }
                for i in np.argsort(-self.importance, kind="stable")
            ],
            "classes": self.classes,
            "n_rows": self.n_rows,
        }

    def summary(self) -> str:
        lines = [f"ANOVA-TPNN component importance (root mean square over {self.n_rows} rows):"]
        lines += [f"  {name:<30} {value:.4g}" for name, value in self.ranked()[:15]]
        if len(self.names) > 15:
            lines.append(f"  ... and {len(self.names) - 15} more")
        return "\n".join(lines)

    def plot(self, ax=None, top: int = 15):
        """Horizontal bars of the ``top`` most important components."""
        ax = new_axes(ax, (6.0, 0.3 * min(top, len(self.names)) + 1.2))
        ranked = self.ranked()[:top][::-1]
        ax.barh([name for name, _ in ranked], [value for _, value in ranked], color="tab:blue")
        ax.set_xlabel("root mean square of the component")
        ax.set_title("ANOVA-TPNN component importance")
        ax.grid(axis="x", alpha=0.3)
        return ax


def _same(label: Any, target: Any) -> bool:
    """A class label is named by itself or by its text (--target 2 for the class 2), a number
    also by the text of its value (--target 1 for the class 1.0 of a label column read as
    floats, whose str is "1.0")."""
    if bool(label == target) or str(label) == str(target):
        return True
    label = python_value(label)
    if isinstance(label, bool) or not isinstance(label, (int, float)):
        return False
    try:
        return float(str(target)) == label
    except ValueError:
        return False


@dataclass(frozen=True)
class ComponentGrid(Result):
    """One component on a grid of raw feature values, for plotting or export.

    Attributes
    ----------
    name : str
    features : tuple of str
    axes : tuple of numpy.ndarray
        Raw values of each feature (levels for a categorical feature).
    categorical : tuple of bool
    values : numpy.ndarray
        Shape ``(len(axes[0]), ...)`` per feature, plus a last axis of classes for multiclass.
    classes : numpy.ndarray or None
    """

    name: str
    features: tuple[str, ...]
    axes: tuple[np.ndarray, ...]
    categorical: tuple[bool, ...]
    values: np.ndarray = field(repr=False)
    classes: np.ndarray | None = None

    @property
    def multiclass(self) -> bool:
        return self.values.ndim == len(self.axes) + 1

    def summary(self) -> str:
        return (
            f"component {self.name}: range [{self.values.min():.4g}, {self.values.max():.4g}] "
            f"on a grid of {' x '.join(str(len(a)) for a in self.axes)} points"
        )

    def _class_index(self, target: Any) -> int | None:
        if not self.multiclass:
            if target is None or (self.classes is not None and _same(self.classes[-1], target)):
                return None
            if self.classes is None:
                raise InputError.bad("target", "no class for a regression model", target)
            positive = python_value(self.classes[-1])
            raise InputError.bad(
                "target",
                f"no class or {positive!r} for a binary model (its components are the logit "
                f"of class {positive!r})",
                target,
            )
        if target is None:  # the class whose component varies most
            flat = self.values.reshape(-1, self.values.shape[-1])
            return int(np.argmax(flat.std(axis=0)))
        matches = [i for i, c in enumerate(self.classes) if _same(c, target)]
        if not matches:
            raise InputError.bad("target", f"one of the classes {self.classes.tolist()}", target)
        return matches[0]

    def plot(self, ax=None, target: Any = None):
        """A curve (numeric main effect), bars (categorical main effect), a heat map (two numeric
        or two categorical features) or one curve per level (numeric x categorical).

        For multiclass, ``target`` picks the class; main effects show every class by default,
        pairs the class whose component varies most.
        """
        ax = new_axes(ax, (6.0, 4.0))
        k = self._class_index(target)
        if len(self.axes) == 1:
            self._plot_main(ax, target, k)
        elif len(self.axes) == 2:
            self._plot_pair(ax, k)
        else:
            raise InputError.bad("component", "a main effect or a pair to plot", self.name)
        return ax

    def _plot_main(self, ax, target, k) -> None:
        values = self.values if self.multiclass else self.values[:, None]
        columns = range(values.shape[1]) if (target is None or k is None) else [k]
        labels = [None] if not self.multiclass else [f"class {self.classes[i]}" for i in columns]
        axis = self.axes[0]
        if self.categorical[0]:
            width = 0.8 / len(labels)
            positions = np.arange(len(axis))
            for i, (c, label) in enumerate(zip(columns, labels, strict=True)):
                ax.bar(
                    positions + (i - (len(labels) - 1) / 2) * width,
                    values[:, c],
                    width,
                    label=label,
                )
            ax.set_xticks(positions, [str(v) for v in axis])
        else:
            for c, label in zip(columns, labels, strict=True):
                ax.plot(axis.astype(float), values[:, c], label=label)
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_xlabel(self.features[0])
        ax.set_ylabel(self._value_label(k if len(labels) == 1 else None))
        if self.multiclass and len(labels) > 1:
            ax.legend(fontsize="small")
        ax.set_title(f"main effect of {self.features[0]}")

    def _plot_pair(self, ax, k) -> None:
        values = self.values if k is None else self.values[..., k]
        a, b = self.axes
        cat_a, cat_b = self.categorical
        if cat_a != cat_b:  # one curve per level of the categorical feature
            if cat_a:
                values, a, b = values.T, b, a
            levels, names = b, (self.features[0], self.features[1])
            numeric_name = names[1] if cat_a else names[0]
            level_name = names[0] if cat_a else names[1]
            for i, level in enumerate(levels):
                ax.plot(a.astype(float), values[:, i], label=f"{level_name} = {level}")
            ax.axhline(0.0, color="0.6", lw=0.8)
            ax.set_xlabel(numeric_name)
            ax.set_ylabel(self._value_label(k))
            ax.legend(fontsize="small")
        else:
            limit = float(np.abs(values).max()) or 1.0
            if cat_a:
                mesh = ax.imshow(
                    values.T, origin="lower", aspect="auto", cmap="RdBu_r", vmin=-limit, vmax=limit
                )
                ax.set_xticks(range(len(a)), [str(v) for v in a])
                ax.set_yticks(range(len(b)), [str(v) for v in b])
            else:
                mesh = ax.pcolormesh(
                    a.astype(float),
                    b.astype(float),
                    values.T,
                    shading="nearest",
                    cmap="RdBu_r",
                    vmin=-limit,
                    vmax=limit,
                )
            ax.figure.colorbar(mesh, ax=ax, label=self._value_label(k))
            ax.set_xlabel(self.features[0])
            ax.set_ylabel(self.features[1])
        ax.set_title(f"interaction {self.name}")

    def _value_label(self, k) -> str:
        if k is not None:
            return f"component (logit of class {self.classes[k]})"
        if self.classes is not None and not self.multiclass:
            return f"component (logit of class {self.classes[-1]})"
        return "component (logits)" if self.multiclass else "component"


@dataclass(frozen=True)
class ComponentFigures(Result):
    """Chosen components of a fitted model on grids of raw values, saved as one PNG each
    (``component_<name>.png``, see :func:`component_file`).

    Attributes
    ----------
    grids : tuple of ComponentGrid
    target : class label or None
        The class drawn for a multiclass model (None: each plot's default).
    """

    grids: tuple[ComponentGrid, ...] = internal_field()
    target: Any = None

    _dict_extras = ("components", "file_names")

    @property
    def components(self) -> list[str]:
        return [grid.name for grid in self.grids]

    @property
    def file_names(self) -> list[str]:
        return component_files([grid.name for grid in self.grids])

    def summary(self) -> str:
        return f"{len(self.grids)} component plot(s): " + ", ".join(self.components)

    def files(self) -> dict[str, Any]:
        return {
            file: partial(grid.plot, target=self.target)
            for file, grid in zip(self.file_names, self.grids, strict=True)
        }


@dataclass(frozen=True)
class PredictionTable(Result):
    """Predictions of a fitted model, one row per input row, as a result (what
    ``trustlab explain anova-tpnn predict --json`` prints).

    Attributes
    ----------
    task : str
        ``"regression"`` or ``"classification"``.
    classes : numpy.ndarray or None
    table : pandas.DataFrame
        :meth:`ANOVATPNN.prediction_table`, possibly with a ``row`` id column first.
    """

    task: str
    classes: np.ndarray | None
    table: Any = internal_field()

    def _dict_items(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "classes": self.classes,
            "n_rows": len(self.table),
            "columns": [str(c) for c in self.table.columns],
            "rows": self.table.to_dict(orient="records"),
        }

    def summary(self) -> str:
        columns = ", ".join(map(str, self.table.columns[:8]))
        return f"{len(self.table)} predictions ({self.task}); columns: {columns}"

    def files(self) -> dict[str, Any]:
        return {"predictions.csv": self.table}


@dataclass(frozen=True)
class ANOVATPNNSummary(Result):
    """What fitting an ANOVA-TPNN gave: the data, the training run, the score and the components.

    Returned by :meth:`ANOVATPNN.summarize`. Saved (``trustlab explain anova-tpnn fit --out``)
    as ``result.json`` (:meth:`to_dict`), the model (``model.pt``, ``model.json``: read back by
    :meth:`ANOVATPNN.load`), ``components.json`` (the intercept, the importance and every
    component on a grid of raw values), ``importance.png`` (:meth:`plot`),
    ``component_<name>.png`` for the ``top`` strongest main effects and pairs, and
    ``held_out_rows.csv`` (the ``row`` ids of the rows held out for early stopping) when some
    were.

    Attributes
    ----------
    n_rows : int
        The rows the model was scored on.
    task : str
        ``"regression"`` or ``"classification"``.
    classes : numpy.ndarray or None
    n_components : int
    training_score : float
        R^2 (regression) or accuracy (classification) on the rows, less those held out for early
        stopping when the rows are the fit's (``n_training_scored`` says on how many).
    held_out_metric : str
        ``"accuracy"`` (classification) or ``"rmse"`` (regression, in the target's units).
    held_out_score : float or None
        The fitted model's score on the rows held out for early stopping (None when none were:
        small data). Those rows chose the checkpoint and the learning-rate cuts, so it is
        slightly optimistic; it is still the only score on rows the weights never trained on.
    n_held_out : int
        How many rows were held out (``validation_fraction`` of them, stratified by class).
    held_out_rows : numpy.ndarray or None
        Their ids: X's index labels (for a file read by the CLI: rows counted from 0 after the
        header), when known.
    importance : ComponentImportance
    history : dict
        The training run (:attr:`ANOVATPNN.history_`): per-epoch losses, the best epoch;
        ``n_epochs``, ``best_epoch`` and ``validation_loss`` are read from it.
    intercept : float or numpy.ndarray
    grids : tuple of ComponentGrid
        Every component on a grid of raw feature values.
    model : ANOVATPNN
        The fitted model.
    top : int
        How many of the strongest components get a PNG.
    """

    n_rows: int
    task: str
    classes: np.ndarray | None
    n_components: int
    training_score: float
    held_out_metric: str
    held_out_score: float | None
    n_held_out: int
    importance: ComponentImportance = field(repr=False)
    history: dict = internal_field()
    intercept: float | np.ndarray = internal_field()
    grids: tuple[ComponentGrid, ...] = internal_field()
    model: Any = internal_field()
    top: int = internal_field(default=6)
    held_out_rows: np.ndarray | None = internal_field(default=None)
    n_training_scored: int | None = internal_field(default=None)

    figure_name: ClassVar[str] = "importance.png"
    figure_size: ClassVar[tuple[float, float]] = (6.5, 4.2)

    @property
    def n_epochs(self) -> int:
        """Epochs trained (early stopping may end before ``max_epochs``)."""
        return int(self.history["n_epochs"])

    @property
    def best_epoch(self) -> int:
        """The epoch whose checkpoint was kept (counted from 1)."""
        return int(self.history["best_epoch"])

    @property
    def validation_loss(self) -> float:
        """The best validation loss (on the standardised target for regression; on the training
        rows when none were held out, as ``to_dict()["validation_loss_rows"]`` says)."""
        return float(self.history["best_validation_loss"])

    def _dict_items(self) -> dict[str, Any]:
        return {
            "n_rows": self.n_rows,
            "task": self.task,
            "classes": self.classes,
            "n_components": self.n_components,
            "n_epochs": self.n_epochs,
            "best_epoch": self.best_epoch,
            "validation_loss": self.validation_loss,
            # below 61 rows none are held out and the loss is the training rows' ('n_held_out' 0)
            "validation_loss_rows": "held_out"
            if self.history.get("n_validation_rows", 1)
            else "training",
            "training_score": self.training_score,
            "training_score_rows": self.n_rows
            if self.n_training_scored is None
            else self.n_training_scored,
            "held_out_metric": self.held_out_metric,
            "held_out_score": self.held_out_score,
            "n_held_out": self.n_held_out,
            "importance": self.importance,
            "files": self.file_names,
        }

    @property
    def plotted(self) -> list[str]:
        """The strongest main effects and pairs, at most ``top`` of them (those get a PNG)."""
        names = self.importance.top(self.n_components)
        # by the features of each (a column may be called "R & D"), not by the " & " in a name
        terms = dict(zip(self.importance.names, self.importance.terms, strict=True))
        drawable = [n for n in names if len(terms[n]) <= 2]
        return drawable[: self.top]

    @property
    def file_names(self) -> list[str]:
        """The files saved beside ``result.json``."""
        return [
            MODEL_FILE,
            META_FILE,
            COMPONENTS_FILE,
            self.figure_name,
            *component_files(self.plotted),
            *([HELD_OUT_FILE] if self.held_out_rows is not None else []),
        ]

    def summary(self) -> str:
        metric = "R^2" if self.task == "regression" else "accuracy"
        held_out = self.history.get("n_validation_rows", 1)
        loss = "validation loss" if held_out else "training loss (no rows held out)"
        head = (
            f"ANOVA-TPNN ({self.task}) on {self.n_rows} rows: {self.n_components} components, "
            f"best {loss} {self.validation_loss:.4g} at epoch {self.best_epoch} of "
            f"{self.n_epochs}; training {metric} {self.training_score:.3f}{self._scored_on()}"
        )
        return "\n".join([head, self.held_out_line(), self.importance.summary()])

    def _scored_on(self) -> str:
        scored = self.n_training_scored
        if scored is None or scored == self.n_rows:
            return ""
        return f" (on the {scored} rows it trained on)"

    def held_out_line(self) -> str:
        """One line: the score on the held-out rows and which rows they were."""
        if self.held_out_score is None:
            return "held-out score: none (too few rows to hold any out; every row trained)"
        name = "accuracy" if self.held_out_metric == "accuracy" else "RMSE"
        how = "drawn at random, stratified by class" if name == "accuracy" else "drawn at random"
        where = f"; their ids: {HELD_OUT_FILE}" if self.held_out_rows is not None else ""
        return (
            f"held-out {name} {self.held_out_score:.4g} on the {self.n_held_out} rows kept out of "
            f"training ({how}; they chose when to stop, so slightly optimistic{where})"
        )

    def plot(self, ax: Any = None, *, top: int = 15) -> Any:
        """The importance of the ``top`` strongest components (bars)."""
        return self.importance.plot(ax=ax, top=top)

    def components_document(self) -> dict[str, Any]:
        """What ``components.json`` holds: the intercept, the importance, every component."""
        return {
            "task": self.task,
            "classes": self.classes,
            "intercept": self.intercept,
            "importance": self.importance,
            "components": list(self.grids),
        }

    def files(self) -> dict[str, Any]:
        files: dict[str, Any] = model_files(self.model)
        files[COMPONENTS_FILE] = self.components_document()
        for file, name in zip(component_files(self.plotted), self.plotted, strict=True):
            files[file] = partial(self.model.plot_component, name)
        if self.held_out_rows is not None:
            import pandas as pd

            files[HELD_OUT_FILE] = pd.DataFrame({"row": self.held_out_rows})
        return files

"""``trustlab explain anova-tpnn``: fit, apply and draw an ANOVA-TPNN glass-box model.

``fit --data F --label Y --out DIR`` trains the model on a table and writes into DIR:

* ``model.pt`` (tensors, read back with ``torch.load(weights_only=True)``: no pickled code) and
  ``model.json`` (everything else), loaded by ``ANOVATPNN.load(DIR)``;
* ``components.json``: the intercept, the importance of every component and every component on
  a grid of raw feature values;
* ``importance.png`` and ``component_<name>.png`` for the strongest components.

``predict --model DIR --data F`` writes predictions (and class probabilities) as CSV;
``plot --model DIR --component NAME --out DIR`` draws chosen components.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab.cli._common import JSON_OPTION_HELP, console, emit, progress, read_table
from trustlab.errors import InputError

__all__ = ["app", "fit", "predict", "plot", "FitReport"]

app = typer.Typer(
    no_args_is_help=True,
    help="ANOVA-TPNN: a glass-box network with unique main effects and interactions.",
)

COMPONENTS_FILE = "components.json"
IMPORTANCE_FILE = "importance.png"
GRID_POINTS = 60


@app.callback()
def _group() -> None:
    """ANOVA-TPNN: a glass-box network with unique main effects and interactions."""


@dataclass(frozen=True)
class FitReport:
    """What ``fit`` did: the data, the training run, the importance and the files written."""

    n_rows: int
    task: str
    classes: list | None
    n_components: int
    n_epochs: int
    best_epoch: int
    validation_loss: float
    training_score: float
    importance: Any = field(repr=False)
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "n_rows": self.n_rows,
            "task": self.task,
            "classes": self.classes,
            "n_components": self.n_components,
            "n_epochs": self.n_epochs,
            "best_epoch": self.best_epoch,
            "validation_loss": self.validation_loss,
            "training_score": self.training_score,
            "importance": self.importance.to_dict(),
            "files": self.files,
        }

    def summary(self) -> str:
        metric = "R^2" if self.task == "regression" else "accuracy"
        head = (
            f"ANOVA-TPNN ({self.task}) on {self.n_rows} rows: {self.n_components} components, "
            f"best validation loss {self.validation_loss:.4g} at epoch {self.best_epoch} of "
            f"{self.n_epochs}; training {metric} {self.training_score:.3f}"
        )
        lines = [head, self.importance.summary()]
        if self.files:
            lines.append(f"wrote {len(self.files)} files")
        return "\n".join(lines)


def _names(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def _interactions(text: str) -> Any:
    """``all``, ``auto``, ``none`` or pairs such as ``age:income,age:sex``."""
    if text in ("all", "auto"):
        return text
    if text == "none":
        return []
    terms = [tuple(p.strip() for p in term.split(":")) for term in _names(text)]
    if not terms or any(len(t) < 2 or not all(t) for t in terms):
        raise InputError.bad(
            "--interactions", "all, auto, none or pairs like 'age:income,age:sex'", text
        )
    return terms


def _feature_frame(frame, label: str | None, features: list[str], exclude: list[str]):
    from trustlab.cli._common import require_columns

    for option, names in (("--features", features), ("--exclude", exclude)):
        for name in names:
            require_columns(frame, {option: name})
    if features:
        return frame[features]
    dropped = set(exclude) | ({label} if label else set())
    return frame[[c for c in frame.columns if c not in dropped]]


@app.command("fit")
def fit(
    data: Annotated[Path, typer.Option("--data", help="CSV, TSV or Parquet training table.")],
    label: Annotated[str, typer.Option("--label", help="The target column.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the model and plots.")],
    features: Annotated[
        str | None,
        typer.Option("--features", help="Comma-separated feature columns (default: all others)."),
    ] = None,
    exclude: Annotated[
        str | None, typer.Option("--exclude", help="Comma-separated columns that are not features.")
    ] = None,
    task: Annotated[
        str, typer.Option("--task", help="auto, regression or classification.")
    ] = "auto",
    order: Annotated[int, typer.Option("--order", help="Largest component order.")] = 2,
    n_basis: Annotated[int, typer.Option("--n-basis", help="Basis neurons per component.")] = 10,
    interactions: Annotated[
        str,
        typer.Option("--interactions", help="all, auto, none, or pairs like 'age:income,age:sex'."),
    ] = "all",
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Most training epochs.")] = 300,
    drop_missing: Annotated[
        bool,
        typer.Option("--drop-missing", help="Drop rows with a missing value instead of failing."),
    ] = False,
    top: Annotated[
        int, typer.Option("--top", help="Plot this many of the strongest components.")
    ] = 6,
    random_state: Annotated[int, typer.Option("--random-state", help="Seed.")] = 0,
    n_threads: Annotated[
        int | None, typer.Option("--n-threads", help="Torch threads (default: torch's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Fit ANOVA-TPNN on a table; save the model, its components and their plots."""
    from trustlab._checks import check_positive_int
    from trustlab.cli._common import require_columns
    from trustlab.explain.anova_tpnn import ANOVATPNN

    check_positive_int(top, "--top", minimum=0)
    terms = _interactions(interactions)
    frame = read_table(data)
    require_columns(frame, {"--label": label})
    X = _feature_frame(frame, label, _names(features), _names(exclude))
    y = frame[label]
    missing = (X.isna().any(axis=1) | y.isna()).to_numpy()
    if missing.any() and not drop_missing:
        first = int(missing.argmax())
        columns = [c for c in [*X.columns, label] if frame[c].iloc[first] != frame[c].iloc[first]]
        raise InputError(
            f"--data: expected no missing values, got {int(missing.sum())} row(s) with gaps (first "
            f"at row {first}, in {', '.join(map(repr, columns))}); impute them or pass "
            "--drop-missing",
            argument="--data",
        )
    X, y = X[~missing], y[~missing]
    model = ANOVATPNN(
        order=order,
        n_basis=n_basis,
        interactions=terms,
        task=task,
        max_epochs=max_epochs,
        random_state=random_state,
        n_threads=n_threads,
    )
    with progress(not as_json) as bar:
        epochs = bar.add_task("ANOVA-TPNN epochs", total=max_epochs)
        model.fit(X, y, progress=lambda epoch, total, loss: bar.update(epochs, completed=epoch))
    written = _write_model(model, Path(out), top)
    report = FitReport(
        n_rows=len(X),
        task=model.task_,
        classes=_classes(model),
        n_components=len(model.component_names_),
        n_epochs=int(model.history_["n_epochs"]),
        best_epoch=int(model.history_["best_epoch"]),
        validation_loss=float(model.history_["best_validation_loss"]),
        training_score=model.score(X, y),
        importance=model.importance(),
        files=[str(p) for p in written],
    )
    emit(report, as_json)


def _write_model(model, out: Path, top: int) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = list(model.save(out))
    importance = model.importance()
    grids = [model.component_grid(name, GRID_POINTS) for name in model.component_names_]
    document = {
        "task": model.task_,
        "classes": _classes(model),
        "intercept": _plain(model.intercept_),
        "importance": importance.to_dict(),
        "components": [grid.to_dict() for grid in grids],
    }
    path = out / COMPONENTS_FILE
    path.write_text(json.dumps(document, indent=1))
    written.append(path)
    written.append(_save(importance.plot(), out / IMPORTANCE_FILE))
    plottable = [name for name in importance.top(len(grids)) if name.count(" & ") <= 1]
    for name in plottable[:top]:
        written.append(_save(model.plot_component(name), out / component_file(name)))
    return written


def component_file(name: str) -> str:
    """The PNG file name of a component: ``component_age.png``, ``component_age__income.png``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name.replace(" & ", "__"))
    return f"component_{safe}.png"


def _classes(model) -> list | None:
    classes = getattr(model, "classes_", None)
    return None if classes is None else _plain(classes)


def _plain(value):
    import numpy as np

    return np.asarray(value).tolist()


def _save(ax, path: Path) -> Path:
    ax.figure.savefig(path, dpi=110, bbox_inches="tight")
    return path


def _load(model: Path):
    from trustlab.explain.anova_tpnn import ANOVATPNN

    return ANOVATPNN.load(model)


@app.command("predict")
def predict(
    model: Annotated[Path, typer.Option("--model", help="Directory written by `fit`.")],
    data: Annotated[Path, typer.Option("--data", help="CSV, TSV or Parquet table to predict.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="CSV file for the predictions (default: stdout).")
    ] = None,
    components: Annotated[
        bool, typer.Option("--components", help="Also write every component's value per row.")
    ] = False,
) -> None:
    """Predict with a saved model: one row per input row (prediction, probabilities)."""
    import pandas as pd

    fitted = _load(model)
    frame = read_table(data)
    table = pd.DataFrame({"prediction": fitted.predict(frame)})
    if fitted.task_ == "classification":
        proba = fitted.predict_proba(frame)
        for k, name in enumerate(fitted.classes_):
            table[f"probability_{name}"] = proba[:, k]
    if components:
        values = fitted.components(frame)
        flat = values.values.reshape(len(frame), len(values.names), -1)
        for c, name in enumerate(values.names):
            if flat.shape[2] == 1:
                table[name] = flat[:, c, 0]
            else:
                for k, label in enumerate(fitted.classes_):
                    table[f"{name} [{label}]"] = flat[:, c, k]
    if out is None:
        typer.echo(table.to_csv(index=False), nl=False)
    else:
        table.to_csv(out, index=False)
        console.print(f"wrote {len(table)} predictions to {out}", highlight=False, markup=False)


@app.command("plot")
def plot(
    model: Annotated[Path, typer.Option("--model", help="Directory written by `fit`.")],
    component: Annotated[
        list[str],
        typer.Option(
            "--component", help="A feature ('age') or pair ('age & income', 'age:income'); repeat."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory for the PNG files.")],
    target: Annotated[
        str | None, typer.Option("--target", help="The class to draw (multiclass models).")
    ] = None,
) -> None:
    """Draw chosen components of a saved model as PNG files."""
    fitted = _load(model)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in component:
        key = [p.strip() for p in name.split(":")] if ":" in name else name
        grid = fitted.component_grid(key, 100)
        written.append(_save(grid.plot(target=target), out / component_file(grid.name)))
    console.print(f"wrote {len(written)} plots to {out}", highlight=False, markup=False)

"""``trustlab explain anova-tpnn``: fit, apply and draw an ANOVA-TPNN glass-box model.

``fit --data F --label Y --out DIR`` trains the model on a table and saves what
:meth:`~trustlab.explain.ANOVATPNN.summarize` returns into DIR: ``result.json`` (the training run
and the importance), ``model.pt`` and ``model.json`` (read back by ``ANOVATPNN.load(DIR)``),
``components.json`` (the intercept, the importance and every component on a grid of raw
feature values), ``importance.png`` and ``component_<name>.png`` for the strongest components.

``predict --model DIR --data F`` writes predictions (and class probabilities) as CSV;
``plot --model DIR --component NAME --out DIR`` draws chosen components.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, progress, read_table, save, tell
from trustlab.errors import InputError

__all__ = ["app", "fit", "predict", "plot"]

app = typer.Typer(
    no_args_is_help=True,
    help="ANOVA-TPNN: a glass-box network with unique main effects and interactions.",
)

GRID_POINTS = 60


@app.callback()
def _group() -> None:
    """ANOVA-TPNN: a glass-box network with unique main effects and interactions."""


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
        int, typer.Option("--top", min=0, help="Plot this many of the strongest components.")
    ] = 6,
    seed: Annotated[int, typer.Option("--seed", help="Seed.")] = 0,
    n_jobs: Annotated[
        int | None, typer.Option("--n-jobs", help="Torch threads (default 1; -1: every core).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Fit ANOVA-TPNN on a table; save the model, its components and their plots."""
    from trustlab.cli._common import require_columns
    from trustlab.explain.anova_tpnn import ANOVATPNN

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
        random_state=seed,
        n_jobs=n_jobs,
    )
    with progress(not as_json) as bar:
        epochs = bar.add_task("ANOVA-TPNN epochs", total=max_epochs)
        model.fit(X, y, progress=lambda epoch, total, loss: bar.update(epochs, completed=epoch))
    summary = model.summarize(X, y, n_points=GRID_POINTS, top=top)
    emit(summary, as_json)
    save(summary, out, as_json)


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
    table = _load(model).prediction_table(read_table(data), components=components)
    if out is None:
        typer.echo(table.to_csv(index=False), nl=False)
    else:
        table.to_csv(out, index=False)
        tell(f"wrote {len(table)} predictions to {out}")


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
    keys = [[p.strip() for p in name.split(":")] if ":" in name else name for name in component]
    figures = _load(model).component_figures(keys, target=target)
    save(figures, out)

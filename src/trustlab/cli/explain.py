"""``trustlab explain``: explanations from the command line.

``trustlab explain fastpd --model FILE --data F [--features a,b] --out DIR`` explains a fitted tree
ensemble with FastPD: exact interventional SHAP values, PD plots and the strongest pairwise
interactions, with a background drawn from the data (:func:`trustlab.explain.explain_table`).
The command loads the model file safely and writes the library's result with ``save``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab._lazy import require
from trustlab._model_files import (
    PICKLE_SUFFIXES,
    SKOPS_SUFFIXES,
    load_pickle,
    load_skops,
    read_or_raise,
)
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    TrustPickleOption,
    TrustTypeOption,
    emit,
    progress,
    read_table,
    save,
)
from trustlab.errors import InputError

__all__ = ["app", "fastpd", "load_tree_model"]

app = typer.Typer(
    no_args_is_help=True,
    help="Explain models: FastPD (PD functions, SHAP, interactions) for tree ensembles.",
)


@app.callback()
def _group() -> None:
    """Explain models: FastPD (PD functions, SHAP, interactions) for tree ensembles."""


MODEL_FILES = (
    "a .skops file, an xgboost .json/.ubj file, a LightGBM .txt file "
    "(or a .pkl/.pickle/.joblib file with --trust-pickle)"
)


@app.command("fastpd")
def fastpd(
    model: Annotated[Path, typer.Option("--model", help=f"The fitted tree model: {MODEL_FILES}.")],
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="CSV or Parquet table holding the model's feature columns; background and "
            "explained rows are drawn from it.",
        ),
    ],
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            help="Comma-separated features to draw PD plots for (default: the three with the "
            "largest mean |SHAP|).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory for the SHAP values, tables and PNG plots."),
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option(
            "--exclude",
            help="Comma-separated columns that are not features (e.g. the label); needed only "
            "when the model does not store its feature names.",
        ),
    ] = None,
    background_size: Annotated[
        int,
        typer.Option("--background-size", help="Rows drawn as the background (all when fewer)."),
    ] = 1000,
    eval_size: Annotated[
        int, typer.Option("--eval-size", help="Rows explained (all when fewer).")
    ] = 1000,
    max_order: Annotated[
        int, typer.Option("--max-order", help="Largest component order in the importance table.")
    ] = 2,
    trust_pickle: TrustPickleOption = False,
    trust_type: TrustTypeOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for drawing the rows.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Exact interventional SHAP values, PD plots and interactions of a tree ensemble (FastPD)."""
    from trustlab.explain.fastpd import explain_table

    with progress(not as_json) as bar:
        task = bar.add_task("FastPD", total=2)
        estimator = load_tree_model(model, trust_pickle=trust_pickle, trust_types=trust_type or ())
        table = read_table(data)
        bar.advance(task)
        explanation = explain_table(
            estimator,
            table,
            exclude=_split_names(exclude),
            background_size=background_size,
            eval_size=eval_size,
            features=_split_names(features) or None,
            max_order=max_order,
            random_state=seed,
        )
        bar.advance(task)
    emit(explanation, as_json)
    save(explanation, out, as_json)


def load_tree_model(
    path: Path, *, trust_pickle: bool = False, trust_types: list[str] | tuple[str, ...] = ()
) -> Any:
    """Load a tree model file safely: skops (trusted library types only), xgboost, LightGBM.

    Pickle and joblib files can run arbitrary code when loaded, so they are read only with
    ``trust_pickle``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError.bad("--model", "an existing model file", str(path))
    suffix = path.suffix.lower()
    if suffix in SKOPS_SUFFIXES:
        return load_skops(path, trust_types=trust_types, argument="--model")
    if suffix in (".json", ".ubj"):
        xgb = require("xgboost", "trees")
        return read_or_raise(
            lambda: xgb.Booster(model_file=str(path)), path, "an xgboost model", "--model"
        )
    if suffix == ".txt":
        lgb = require("lightgbm", "trees")
        return read_or_raise(
            lambda: lgb.Booster(model_file=str(path)), path, "a LightGBM model", "--model"
        )
    if suffix in PICKLE_SUFFIXES:
        return load_pickle(path, trust_pickle=trust_pickle, argument="--model")
    raise InputError.bad("--model", MODEL_FILES, str(path))


def _split_names(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]

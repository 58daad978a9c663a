"""``trustlab explain``: explanations from the command line.

``trustlab explain fastpd --model FILE --data F [--features a,b] --out DIR`` explains a fitted tree
ensemble with FastPD: exact interventional SHAP values, PD plots and the strongest pairwise
interactions, with a background drawn from the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

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
    console,
    emit,
    progress,
    read_table,
)
from trustlab.errors import ConfigError, InputError

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
    random_state: Annotated[
        int, typer.Option("--random-state", help="Seed for drawing the rows.")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Exact interventional SHAP values, PD plots and interactions of a tree ensemble (FastPD)."""
    from trustlab._checks import check_positive_int, check_random_state
    from trustlab.explain.fastpd import FastPD, Importance

    check_positive_int(background_size, "--background-size")
    check_positive_int(eval_size, "--eval-size")
    check_positive_int(max_order, "--max-order")
    rng = check_random_state(random_state, "--random-state")
    with progress(not as_json) as bar:
        task = bar.add_task("FastPD", total=5)
        estimator = load_tree_model(model, trust_pickle=trust_pickle, trust_types=trust_type or ())
        names, X = _feature_table(estimator, read_table(data), _split_names(exclude))
        bar.advance(task)
        background = X[_draw(len(X), background_size, rng)]
        rows = X[_draw(len(X), eval_size, rng)]
        explainer = FastPD(estimator, background, feature_names=names)
        shap_values = explainer.shap_values(rows)
        bar.advance(task)
        decomposition = explainer.decompose(rows, max_order=max_order)
        importance = Importance.from_values(shap_values, decomposition)
        bar.advance(task)
        chosen = _split_names(features) or importance.top_features(3)
        curves = [explainer.pd_grid(name) for name in chosen]
        bar.advance(task)
        written = _write(out, explainer, rows, shap_values, importance, curves) if out else []
        bar.advance(task)
    emit(importance, as_json)
    if written and not as_json:
        console.print(f"wrote {len(written)} files to {out}", highlight=False, markup=False)


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
        xgb = _optional("xgboost")
        return read_or_raise(
            lambda: xgb.Booster(model_file=str(path)), path, "an xgboost model", "--model"
        )
    if suffix == ".txt":
        lgb = _optional("lightgbm")
        return read_or_raise(
            lambda: lgb.Booster(model_file=str(path)), path, "a LightGBM model", "--model"
        )
    if suffix in PICKLE_SUFFIXES:
        return load_pickle(path, trust_pickle=trust_pickle, argument="--model")
    raise InputError.bad("--model", MODEL_FILES, str(path))


def _optional(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError.missing_extra(module, "trees") from None


def _split_names(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def _feature_table(model: Any, frame, exclude: list[str]) -> tuple[list[str], np.ndarray]:
    """The model's feature columns (by its stored names when it has them) as a float array."""
    from trustlab.cli._common import require_columns
    from trustlab.explain._trees import as_tree_ensemble

    ensemble = as_tree_ensemble(model)
    for column in exclude:
        require_columns(frame, {"--exclude": column})
    if ensemble.feature_names is not None:
        names = list(ensemble.feature_names)
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise InputError.bad("--data", f"the model's feature columns {names}", list(frame))
    else:
        names = [str(c) for c in frame.columns if c not in exclude]
        if len(names) != ensemble.n_features:
            raise InputError(
                f"--data: expected {ensemble.n_features} feature columns (the model's), got "
                f"{len(names)}: {', '.join(names[:20])}; name the other columns with --exclude",
                argument="--data",
            )
    from pandas.api.types import is_numeric_dtype

    text = [n for n in names if not is_numeric_dtype(frame[n])]
    if text:
        raise InputError.bad("--data", "numeric feature columns", f"non-numeric {text}")
    values = frame[names].to_numpy(dtype=np.float64)
    return names, values


def _draw(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    return np.arange(n) if n <= size else np.sort(rng.choice(n, size=size, replace=False))


def _write(out: Path, explainer, rows, shap_values, importance, curves) -> list[Path]:
    """SHAP values (CSV), importance and PD curves (JSON), interactions (CSV) and PNG plots."""
    import pandas as pd

    from trustlab.explain.fastpd import plot_shap_summary

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names, outputs = list(explainer.feature_names_), list(explainer.output_names_)
    phi = shap_values.reshape(len(rows), len(names), -1)
    columns = names if phi.shape[2] == 1 else [f"{o}:{n}" for o in outputs for n in names]
    flat = phi.transpose(0, 2, 1).reshape(len(rows), -1)
    written = [out / "shap_values.csv", out / "fastpd.json", out / "interactions.csv"]
    pd.DataFrame(flat, columns=columns).to_csv(written[0], index=False)
    summary = {
        "importance": importance.to_dict(),
        "expected_value": np.atleast_1d(explainer.expected_value_).tolist(),
        "n_background": len(explainer.background_),
        "partial_dependence": [c.to_dict() for c in curves],
    }
    written[1].write_text(json.dumps(summary, indent=2))
    pairs = importance.top_interactions(len(importance.components))
    pd.DataFrame(
        [{"feature_1": a, "feature_2": b, "mean_abs_m": v} for (a, b), v in pairs],
        columns=["feature_1", "feature_2", "mean_abs_m"],
    ).to_csv(written[2], index=False)
    kind = "beeswarm" if phi.shape[2] == 1 else "bar"
    ax = plot_shap_summary(shap_values, rows, names, kind=kind, output_names=outputs)
    written.append(_save(ax, out / "shap_summary.png"))
    for curve in curves:
        written.append(_save(curve.plot(), out / f"pd_{_file_part(curve.features[0])}.png"))
    return written


def _save(ax, path: Path) -> Path:
    ax.figure.savefig(path, dpi=110)
    return path


def _file_part(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)

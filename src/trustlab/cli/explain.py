"""``trustlab explain``: explanations from the command line.

``trustlab explain fastpd --model FILE --data F [--rows ...] [--out DIR]`` explains a fitted tree
ensemble (or a scikit-learn Pipeline ending in one) with FastPD: exact interventional SHAP values
of the chosen rows (every row by default), PD plots and the strongest pairwise interactions,
against a background drawn from the same table (:func:`trustlab.explain.plan_table`, then
:meth:`~trustlab.explain.TablePlan.explain`). Every value the model reads is checked before any
work, and ``shap_values.csv`` carries each row's position in the file (``row``) to join on.
The helpers for ``--out`` (refuse an earlier run's files unless ``--overwrite``) and ``--rows``
serve ``explain anova-tpnn`` too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from trustlab._lazy import require
from trustlab._model_files import (
    PICKLE_SUFFIXES,
    SKOPS_SUFFIXES,
    load_pickle,
    load_skops,
    read_or_raise,
)
from trustlab._results import check_output_dir
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    TrustPickleOption,
    TrustTypeOption,
    YesOption,
    announce,
    emit,
    progress,
    read_table,
    save,
    tell,
)
from trustlab.errors import InputError

__all__ = ["app", "fastpd", "load_tree_model", "earlier_outputs", "remove_stale", "row_selection"]

app = typer.Typer(
    no_args_is_help=True,
    help="Explain models: FastPD for tree ensembles, ANOVA-TPNN, EquiGX for e3nn graph networks, region-sparse image classifiers (P2P).",
)


@app.callback()
def _group() -> None:
    """Explain models: FastPD for tree ensembles, ANOVA-TPNN, EquiGX for e3nn graph networks, region-sparse image classifiers (P2P)."""


MODEL_FILES = (
    "a .skops file, an xgboost .json/.ubj file, a LightGBM .txt file "
    "(or a .pkl/.pickle/.joblib file with --trust-pickle)"
)
# Explaining more rows than this asks for --yes: FastPD takes about 4 minutes per million rows
# of 100 depth-6 trees on one core (20,000 rows: 5 s), deeper trees longer, and the SHAP values
# and shap_values.csv grow with every row.
MAX_ROWS = 1_000_000
# What fastpd writes into --out (an earlier run's files are refused without --overwrite).
FASTPD_FILES = (
    "result.json",
    "shap_summary.png",
    "shap_values.csv",
    "interactions.csv",
    "pd_*.png",
)
ROWS_HELP = (
    "all, a range START:STOP (STOP excluded, either end may be left out), row ids such as "
    "3,17,42, or a file of row ids (a CSV/Parquet file with a 'row' column, e.g. an earlier "
    "shap_values.csv, or a text file of numbers). Rows are counted from 0 after the header."
)


@app.command("fastpd")
def fastpd(
    model: Annotated[
        Path,
        typer.Option(
            "--model",
            help=f"The fitted tree model, or a Pipeline ending in one: {MODEL_FILES}.",
        ),
    ],
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="CSV or Parquet table holding the model's input columns; the explained rows "
            "and the background rows come from it.",
        ),
    ],
    rows: Annotated[
        str,
        typer.Option(
            "--rows",
            help=f"Rows to explain: {ROWS_HELP} Default: all (beyond {MAX_ROWS:,} rows only "
            "with --yes).",
        ),
    ] = "all",
    background_rows: Annotated[
        str | None,
        typer.Option(
            "--background-rows",
            help="Rows forming the background (same forms as --rows). Default: --background-size "
            "rows drawn at random.",
        ),
    ] = None,
    background_size: Annotated[
        int | None,
        typer.Option(
            "--background-size",
            help="Rows drawn at random (seeded by --seed) as the background; default 1000, all "
            "when the table has fewer.",
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            help="The label column, left out of the features. Needed (with --exclude for other "
            "columns) only when the model does not store its feature names; a model that does "
            "reads its columns by name and the others are left out.",
        ),
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option(
            "--exclude",
            help="Comma-separated further columns that are not features (e.g. an id); needed "
            "only when the model does not store its feature names.",
        ),
    ] = None,
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            help="Comma-separated features to draw PD plots for (default: the three with the "
            "largest mean |SHAP|).",
        ),
    ] = None,
    max_order: Annotated[
        int, typer.Option("--max-order", help="Largest component order in the importance table.")
    ] = 2,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory for result.json, shap_values.csv (a 'row' column, then one per "
            "feature), interactions.csv and PNG plots. An earlier run's files there are refused "
            "unless --overwrite.",
        ),
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace an earlier run's files in --out (its files this run does not write "
            "are removed).",
        ),
    ] = False,
    trust_pickle: TrustPickleOption = False,
    trust_type: TrustTypeOption = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed for drawing the background (default 0); not with --background-rows.",
        ),
    ] = None,
    encoding: EncodingOption = None,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Exact interventional SHAP values, PD plots and interactions of a tree ensemble (FastPD).

    Every value the model reads is checked first (the whole table, not only the chosen rows);
    shap_values.csv has a 'row' column: each explained row's position in --data.
    """
    from trustlab.explain.fastpd import plan_table

    if seed is not None and background_rows is not None:  # nothing would be drawn
        raise InputError(
            "--seed: expected no seed with --background-rows (the background is not drawn at "
            "random then), got both",
            argument="--seed",
        )
    earlier = earlier_outputs(out, overwrite, FASTPD_FILES)
    estimator = load_tree_model(model, trust_pickle=trust_pickle, trust_types=trust_type or ())
    estimator = _best_rounds(estimator, as_json)
    table = read_table(data, encoding=encoding)
    plan = plan_table(
        estimator,
        table,
        label=label,
        exclude=_split_names(exclude),
        rows=row_selection(rows, len(table), "--rows", encoding),
        background_rows=row_selection(background_rows, len(table), "--background-rows", encoding),
        background_size=background_size,
        features=_split_names(features) or None,
        max_order=max_order,
        random_state=0 if seed is None else seed,
    )
    n, n_table = len(plan.rows), plan.n_table_rows
    which = f"all {n:,} rows" if rows.strip().lower() == "all" else f"{n:,} of the {n_table:,} rows"
    through = " through the pipeline's transform" if plan.pipeline else ""
    announce(
        f"explaining {which} of {data.name}{through}: {plan.n_trees} trees, "
        f"{len(plan.feature_names)} features, background {len(plan.background_rows):,} rows",
        work=n,
        limit=MAX_ROWS,
        yes=yes,
        unit=" rows",
    )
    if plan.unused_columns and plan.names_from_model:
        unused = ", ".join(plan.unused_columns[:10]) + (
            " ..." if len(plan.unused_columns) > 10 else ""
        )
        tell(f"trustlab: the model reads its columns by name; not used: {unused}", as_json=True)
    with progress() as bar:  # on stderr, beside --json output too
        task = bar.add_task("FastPD SHAP values and components (rows)", total=n)
        explanation = plan.explain(
            progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    emit(explanation, as_json)
    remove_stale(earlier, save(explanation, out, as_json), as_json)


def earlier_outputs(out: Path | None, overwrite: bool, patterns: tuple[str, ...]) -> list[Path]:
    """An earlier run's files in ``--out``: refused (one line) unless ``--overwrite``; a file
    where the folder should be is refused too, before any work."""
    if out is not None and Path(out).exists() and not Path(out).is_dir():
        raise InputError.bad("--out", "a directory (it holds several files)", f"the file {out}")
    if out is not None:  # a folder under a file (afile/sub): refused before the work too
        check_output_dir(out, "--out")
    if out is None or not Path(out).is_dir():
        return []
    found = sorted({p for pattern in patterns for p in Path(out).glob(pattern) if p.is_file()})
    if found and not overwrite:
        names = ", ".join(p.name for p in found[:4]) + (", ..." if len(found) > 4 else "")
        raise InputError(
            f"--out: {out} already holds an earlier run's output ({names}); pass --overwrite "
            "to replace it, or choose another --out",
            argument="--out",
        )
    return found


def remove_stale(earlier: list[Path], written: list[Path], as_json: bool = False) -> None:
    """Remove the earlier run's files that this run did not write again (``--overwrite``)."""
    kept = {p.resolve() for p in written}
    stale = [p for p in earlier if p.resolve() not in kept]
    for path in stale:
        path.unlink(missing_ok=True)
    if stale:
        names = ", ".join(p.name for p in stale)
        tell(f"removed the earlier run's {names}", as_json)


_SPEC = re.compile(r"^\s*(\d*\s*:\s*\d*|\d+)(\s*,\s*(\d*\s*:\s*\d*|\d+))*\s*$")
_TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".gz")


def row_selection(text: str | None, n: int, option: str, encoding: str | None = None) -> Any:
    """Row positions from ``--rows``-style text: all (None), ranges and ids, or a file of ids."""
    if text is None or text.strip().lower() == "all":
        return None
    if _SPEC.match(text):
        parts = []
        for part in text.split(","):
            if ":" not in part:
                parts.append(np.array([int(part)]))
                continue
            start_text, stop_text = (p.strip() for p in part.split(":"))
            start = int(start_text) if start_text else 0
            stop = int(stop_text) if stop_text else n
            if start >= n or stop <= start or stop > n:  # refused, never clipped to the table
                empty = " (an empty or reversed range)" if stop <= start < n else ""
                raise InputError(
                    f"{option}: expected a non-empty range START:STOP (START < STOP) of rows "
                    f"within the {n} rows of the table (counted from 0), got "
                    f"{part.strip()!r}{empty}",
                    argument=option,
                )
            parts.append(np.arange(start, stop))
        return np.concatenate(parts)
    path = Path(text)
    if not path.is_file():
        raise InputError.bad(
            option, "all, START:STOP, row ids like 3,17,42 or a file of row ids", text
        )
    return _ids_from_file(path, option, encoding)


def _ids_from_file(path: Path, option: str, encoding: str | None) -> np.ndarray:
    if path.suffix.lower() in _TABLE_SUFFIXES:
        frame = read_table(path, option, encoding=encoding)
        if "row" not in frame.columns:
            raise InputError.bad(option, f"a 'row' column in {path.name}", list(frame.columns))
        column = frame["row"]
        if column.dtype.kind not in "iu" and "row_id" in frame.columns:
            column = frame["row_id"]  # an earlier shap_values.csv of a feature called 'row'
        if column.dtype.kind not in "iu":
            raise InputError.bad(
                option, f"whole numbers in the 'row' column of {path.name}", column.to_numpy()
            )
        return column.to_numpy()
    try:
        words = path.read_text(encoding=encoding or "utf-8").replace(",", " ").split()
    except (UnicodeDecodeError, LookupError) as exc:
        raise InputError(
            f"{option}: could not read {path} ({exc}); name its encoding with --encoding",
            argument=option,
        ) from None
    bad = [w for w in words if not w.isdigit()]
    if bad:
        raise InputError.bad(option, f"row ids (whole numbers) in {path.name}", bad[0])
    return np.array([int(w) for w in words], dtype=np.int64)


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


def _best_rounds(model: Any, as_json: bool) -> Any:
    """An xgboost Booster file that records early stopping (``best_iteration``) keeps every
    round; xgboost's scikit-learn models loaded from it predict with the rounds up to the best
    one, and so is it explained (a bare ``Booster.predict`` would use them all)."""
    if type(model).__module__.startswith("xgboost") and hasattr(model, "attr"):
        best = model.attr("best_iteration")
        rounds = model.num_boosted_rounds()
        if best is not None and int(best) + 1 < rounds:
            tell(
                f"trustlab: the model file records early stopping (best_iteration {best}): "
                f"explaining rounds 0 to {best} of {rounds}, as its scikit-learn model predicts",
                as_json=True,
            )
            return model[: int(best) + 1]
    return model


def _split_names(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]

"""``trustlab explain anova-tpnn``: fit, apply and draw an ANOVA-TPNN glass-box model.

``fit --data F --label Y [--out DIR]`` trains the model on a table, prints what
:meth:`~trustlab.explain.ANOVATPNN.summarize` returns (with the score on the rows held out for
early stopping) and, with ``--out``, saves it into DIR: ``result.json`` (the training run, the
scores and the importance), ``model.pt`` and ``model.json`` (read back by
``ANOVATPNN.load(DIR)``), ``components.json`` (the intercept, the importance and every component
on a grid of raw feature values), ``importance.png``, ``component_<name>.png`` for the strongest
components and ``held_out_rows.csv``. An earlier run's files in DIR are refused unless
``--overwrite``. With ``--out`` the training state is saved after every epoch into ``DIR/_state``
(removed once the model is saved), so a rerun of the same command after a crash or Ctrl-C
continues where it stopped and ends with the model an uninterrupted run gives; a state of other
data or settings is refused (``--overwrite`` discards it).

``predict --model DIR --data F`` writes predictions (and class probabilities) as CSV or JSON;
``plot --model DIR --component NAME --out DIR`` draws chosen components.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from trustlab._results import check_output_dir, output_dir, write_atomic
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    YesOption,
    announce,
    emit,
    progress,
    read_table,
    save,
    tell,
)
from trustlab.cli._resume import fit_resuming, resume_note
from trustlab.cli._runs import options_named, refuse_existing_file
from trustlab.cli.explain import earlier_outputs, remove_stale
from trustlab.errors import InputError

__all__ = ["app", "fit", "predict", "plot"]

app = typer.Typer(
    no_args_is_help=True,
    help="ANOVA-TPNN: a glass-box network with unique main effects and interactions.",
)

GRID_POINTS = 60
# What fit and plot write into --out (an earlier run's files are refused without --overwrite).
FIT_FILES = (
    "result.json",
    "model.pt",
    "model.json",
    "components.json",
    "importance.png",
    "component_*.png",
    "held_out_rows.csv",
)
PLOT_FILES = ("result.json", "component_*.png")
# A fit beyond this much work (rows x components x basis neurons x epochs) asks for --yes: one
# core does about 2e6 to 3e6 a second (5,000 rows, 15 components, 10 neurons, 10 epochs: 4 s), so
# this is about two hours on one core. Fitting 100,000 rows with 15 components and the default
# 10 neurons and 300 epochs (4.5e9) runs without asking.
MAX_FIT_WORK = 2e10
ROW_WORDS = "counted from 0 after the header"
OVERWRITE_HELP = (
    "Replace an earlier run's files in --out (those this run does not write again are removed)."
)


@app.callback()
def _group() -> None:
    """ANOVA-TPNN: a glass-box network with unique main effects and interactions."""


def _names(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def _interactions(text: str) -> Any:
    """``all``, ``auto``, ``none`` or pairs such as ``age:income,age:sex`` (or ``age & income``,
    for columns whose names hold a colon)."""
    if text in ("all", "auto"):
        return text
    if text == "none":
        return []
    terms = [tuple(p.strip() for p in _split_term(term)) for term in _names(text)]
    if not terms or any(len(t) < 2 or not all(t) for t in terms):
        raise InputError.bad(
            "--interactions", "all, auto, none or pairs like 'age:income,age:sex'", text
        )
    return _names(text)  # split once the columns are known (a column may be called "R & D")


def _split_term(term: str, columns: list[str] | None = None) -> tuple[str, ...]:
    """The features of ``age:income`` or ``age & income`` (the component's own name): the
    split into ``columns`` where there is one ("R & D:b", "R & D & b"), else at " & " where
    the text has it, else at ":"."""
    known = _split_into(term.strip(), set(columns or ()))
    if known is not None:
        return tuple(known)
    return tuple(p.strip() for p in (term.split(" & ") if " & " in term else term.split(":")))


def _split_into(text: str, columns: set) -> list[str] | None:
    if text in columns:
        return [text]
    for separator in (" & ", ":"):
        start = text.find(separator)
        while start >= 0:
            rest = _split_into(text[start + len(separator) :].strip(), columns)
            if text[:start].strip() in columns and rest is not None:
                return [text[:start].strip(), *rest]
            start = text.find(separator, start + 1)
    return None


def _feature_frame(frame, label: str | None, features: list[str], exclude: list[str]):
    from trustlab.cli._common import require_columns

    for option, names in (("--features", features), ("--exclude", exclude)):
        for name in names:
            require_columns(frame, {option: name})
    if features:
        repeated = [name for name in dict.fromkeys(features) if features.count(name) > 1]
        if repeated:  # the table of those columns was refused as '--data: ... distinct names'
            raise InputError(
                f"--features: expected each column once, got {repeated[0]!r} "
                f"{features.count(repeated[0])} times",
                argument="--features",
            )
        if label in features:
            raise InputError(
                f"--features: expected feature columns other than the label, got {label!r} "
                "(the --label column) among them",
                argument="--features",
            )
        kept = [name for name in features if name not in exclude]
        if not kept:
            raise InputError(
                f"--exclude: expected to leave some of the --features columns, got every one of "
                f"them excluded ({', '.join(map(repr, features))})",
                argument="--exclude",
            )
        return frame[kept]
    dropped = set(exclude) | ({label} if label else set())
    return frame[[c for c in frame.columns if c not in dropped]]


def _check_rows(frame, X, label: str, drop_missing: bool) -> np.ndarray:
    """Every row of the table, before any is dropped: no infinity; missing values only with
    --drop-missing. Returns the rows to keep; rows are named as in the file."""
    import pandas as pd

    numeric = X.select_dtypes("number")
    infinite = np.isinf(numeric.to_numpy(dtype=np.float64, na_value=np.nan))
    if infinite.any():
        row, col = (int(i) for i in np.argwhere(infinite)[0])
        raise InputError(
            f"--data: expected finite values, got {numeric.iat[row, col]} in "
            f"{numeric.columns[col]!r} at row {row} ({ROW_WORDS}; {int(infinite.sum())} in "
            "all); fix or drop those rows",
            argument="--data",
        )
    y = frame[label]
    missing = (X.isna().any(axis=1) | y.isna()).to_numpy()
    if missing.any() and not drop_missing:
        first = int(missing.argmax())
        columns = [c for c in [*X.columns, label] if pd.isna(frame[c].iloc[first])]
        raise InputError(
            f"--data: expected no missing values, got {int(missing.sum())} row(s) with gaps (first "
            f"at row {first}, {ROW_WORDS}, in {', '.join(map(repr, columns))}); impute them or "
            "pass --drop-missing",
            argument="--data",
        )
    return ~missing


@app.command("fit")
def fit(
    data: Annotated[Path, typer.Option("--data", help="CSV, TSV or Parquet training table.")],
    label: Annotated[str, typer.Option("--label", help="The target column.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory for the model, its components and plots (without it the fit is "
            "printed and nothing is saved). An earlier run's files there are refused unless "
            "--overwrite.",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
    features: Annotated[
        str | None,
        typer.Option(
            "--features",
            help="Comma-separated feature columns (default: all others; less any --exclude).",
        ),
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option(
            "--exclude",
            help="Comma-separated columns that are not features (also dropped from --features).",
        ),
    ] = None,
    task: Annotated[
        str, typer.Option("--task", help="auto, regression or classification.")
    ] = "auto",
    order: Annotated[int, typer.Option("--order", min=1, help="Largest component order.")] = 2,
    n_basis: Annotated[
        int, typer.Option("--n-basis", min=1, help="Basis neurons per component.")
    ] = 10,
    interactions: Annotated[
        str,
        typer.Option(
            "--interactions",
            help="all, auto, none, or pairs like 'age:income,age:sex' ('age & income' where a "
            "name holds a colon).",
        ),
    ] = "all",
    max_epochs: Annotated[
        int, typer.Option("--max-epochs", min=1, help="Most training epochs.")
    ] = 300,
    drop_missing: Annotated[
        bool,
        typer.Option("--drop-missing", help="Drop rows with a missing value instead of failing."),
    ] = False,
    top: Annotated[
        int, typer.Option("--top", min=0, help="Plot this many of the strongest components.")
    ] = 6,
    seed: Annotated[int, typer.Option("--seed", help="Seed.")] = 0,
    n_jobs: Annotated[
        int | None,
        typer.Option(
            "--n-jobs",
            help="Torch threads (default: torch's own setting, which follows OMP_NUM_THREADS; "
            "-1: every core).",
        ),
    ] = None,
    encoding: EncodingOption = None,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Fit ANOVA-TPNN on a table: print the fit (with the accuracy or RMSE on the rows held out
    for early stopping) and, with --out, save the model, its components and their plots; a rerun
    into the same --out resumes an interrupted fit (one of other data or settings is refused;
    --overwrite discards it)."""
    from trustlab.cli._common import require_columns
    from trustlab.explain.anova_tpnn import ANOVATPNN

    earlier = earlier_outputs(out, overwrite, FIT_FILES)
    terms = _interactions(interactions)
    frame = read_table(data, encoding=encoding)
    require_columns(frame, {"--label": label})
    X = _feature_frame(frame, label, _names(features), _names(exclude))
    if isinstance(terms, list):
        terms = [_split_term(term, [str(c) for c in X.columns]) for term in terms]
    for term in terms if isinstance(terms, list) else ():  # before the plan is announced
        for name in term:
            require_columns(X, {"--interactions": name})
        # in the CLI's words, not order=; a lone column ("t:x") is no pair
        if len(set(term)) != len(term) or not 2 <= len(term) <= order:
            raise InputError(
                f"--interactions: expected terms of 2 to --order {order} distinct features, got "
                f"{' & '.join(term)!r}" + ("; raise --order" if len(set(term)) > order else ""),
                argument="--interactions",
            )
    keep = _check_rows(frame, X, label, drop_missing)
    if len(keep) < 2:  # no row was dropped: the table itself is too short
        raise InputError(
            f"--data: expected a table of at least 2 rows to fit on, got {len(keep)} ({data.name})",
            argument="--data",
        )
    if keep.sum() < 2:  # a fit needs 2 rows; "0 sample(s)" would not say where they went
        raise InputError(
            f"--data: expected at least 2 rows without a missing value, got {int(keep.sum())} of "
            f"{len(keep)} (--drop-missing drops the others); impute the gaps or leave out the "
            "columns that have them (--exclude)",
            argument="--data",
        )
    dropped = f" ({int((~keep).sum())} with a missing value dropped)" if not keep.all() else ""
    X, y = X[keep], frame[label][keep]
    state = None if out is None else out / "_state"
    model = ANOVATPNN(
        order=order,
        n_basis=n_basis,
        interactions=terms,
        task=task,
        max_epochs=max_epochs,
        random_state=seed,
        n_jobs=n_jobs,
        checkpoint_dir=state,
    )
    n_rows = len(X)
    note = resume_note(state) if state is not None else None

    def epoch_done(epoch: int, total: int, loss: float) -> None:
        if epoch > 0 and note is not None:
            note(epoch)
        if epoch == 0:  # the library has checked X and y: say what the training will be
            announce(
                f"fitting ANOVA-TPNN on {n_rows:,} rows of {data.name}{dropped}: "
                f"{len(model.component_names_)} components x {n_basis} basis neurons, at most "
                f"{max_epochs} epochs",
                work=float(n_rows) * len(model.component_names_) * n_basis * max_epochs,
                limit=MAX_FIT_WORK,
                yes=yes,
                unit=" row-neuron-epochs",
            )
        bar.update(epochs, completed=epoch)

    hint = f"delete {state} or rerun with --overwrite to start afresh"
    with progress() as bar, options_named({"checkpoint_dir": "--out"}, {"checkpoint_dir": hint}):
        epochs = bar.add_task("ANOVA-TPNN epochs", total=max_epochs)
        if state is None:
            model.fit(X, y, progress=epoch_done)
        else:
            fit_resuming(lambda: model.fit(X, y, progress=epoch_done), state, overwrite)
    summary = model.summarize(X, y, n_points=GRID_POINTS, top=top)
    emit(summary, as_json)
    if out is None:
        tell("trustlab: nothing saved: pass --out DIR to keep the model and its plots", True)
    else:
        remove_stale(earlier, save(summary, out, as_json), as_json)
        shutil.rmtree(state, ignore_errors=True)  # saved: the training state is done with


def _load(model: Path):
    from trustlab.explain.anova_tpnn import ANOVATPNN

    return ANOVATPNN.load(model)


def _write_csv(table: Any, tmp: Path, name: str) -> None:
    """``table`` as CSV at ``tmp``, written under the name ``name`` (pandas reads the compression
    and a zip or tar archive's member name from the file name, not from a temporary one)."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory(dir=tmp.parent, prefix=f".{name}.") as folder:
        named = Path(folder) / name
        table.to_csv(named, index=False)
        os.replace(named, tmp)


@app.command("predict")
def predict(
    model: Annotated[
        Path, typer.Option("--model", help="Directory written by `fit` (or its model.pt).")
    ],
    data: Annotated[Path, typer.Option("--data", help="CSV, TSV or Parquet table to predict.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="CSV file for the predictions (default: stdout). An existing file is refused "
            "unless --overwrite.",
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing --out file.")
    ] = False,
    components: Annotated[
        bool, typer.Option("--components", help="Also write every component's value per row.")
    ] = False,
    encoding: EncodingOption = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Predict with a saved model: one row per input row (its row id, the prediction, class
    probabilities and, with --components, every component)."""
    from trustlab.explain.anova_tpnn import PredictionTable

    if out is not None and out.is_dir():
        raise InputError.bad("--out", "a CSV file name", f"the directory {out}")
    if out is not None:
        check_output_dir(out.parent, "--out")  # a folder under a file: refused before any work
    refuse_existing_file(out, overwrite)
    fitted = _load(model)
    frame = read_table(data, encoding=encoding)
    if frame.empty and len(frame.columns):  # a header only ("0 sample(s)" would count the id too)
        raise InputError(
            f"--data: expected at least one row to predict, got a table with a header and no "
            f"rows ({data.name})",
            argument="--data",
        )
    table = fitted.prediction_table(frame, components=components)
    row = "row"
    while row in table.columns:  # a component named "row" (then "row_id", ...)
        row += "_id"
    table.insert(0, row, frame.index.to_numpy())
    result = PredictionTable(fitted.task_, getattr(fitted, "classes_", None), table)
    if as_json:
        emit(result, as_json)
    if out is not None:
        output_dir(out.parent, "--out")  # a new folder is made, as other commands do
        write_atomic(out, lambda tmp: _write_csv(table, tmp, out.name))  # no half file
        tell(f"wrote {len(table)} predictions to {out}", as_json)
    elif not as_json:
        typer.echo(table.to_csv(index=False), nl=False)


@app.command("plot")
def plot(
    model: Annotated[
        Path, typer.Option("--model", help="Directory written by `fit` (or its model.pt).")
    ],
    component: Annotated[
        list[str],
        typer.Option(
            "--component", help="A feature ('age') or pair ('age & income', 'age:income'); repeat."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Directory for the PNG files (and result.json naming them). An earlier run's "
            "files there are refused unless --overwrite.",
        ),
    ],
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The class to draw (multiclass models; a binary model's components are the "
            "logit of its second class, the only one it takes).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    """Draw chosen components of a saved model as PNG files."""
    earlier = earlier_outputs(out, overwrite, PLOT_FILES)
    fitted = _load(model)
    names = fitted.component_names_  # a column named "t:x" is its own main effect
    keys = [
        [p.strip() for p in name.split(":")] if ":" in name and name not in names else name
        for name in component
    ]
    figures = fitted.component_figures(keys, target=target)
    if as_json:
        emit(figures, as_json)
    remove_stale(earlier, save(figures, out, as_json), as_json)

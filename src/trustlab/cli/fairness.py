"""``trustlab fairness``: multiclass disparate conditional prediction (DCP) from the command line.

A thin adapter: it reads the files, parses the options and calls :mod:`trustlab.fairness`, which
validates every value (its errors name the options) and returns the results printed and saved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    emit,
    err_console,
    native_stdout_to_stderr,
    progress,
    read_table,
    renamed_option,
    require_columns,
    save,
    tell,
)
from trustlab.cli._runs import OverwriteOption, refuse_existing, remove_stale
from trustlab.errors import InputError
from trustlab.fairness.tables import AGGREGATE_FORMAT

__all__ = ["app"]

#: What the two commands write into --out; either refuses a folder holding any of them.
DCP_OUTPUTS = ("result.json", "dcp.png", "dcp_aggregate.png")

#: ``--restarts``, the old name of ``--n-restarts``: hidden, kept for one release.
OldRestartsOption = Annotated[
    int | None,
    typer.Option("--restarts", hidden=True, help="Deprecated: use --n-restarts."),
]

app = typer.Typer(
    no_args_is_help=True,
    help="Fairness audits: multiclass disparate conditional prediction (DCP).",
)


@app.command("dcp")
def dcp_command(
    data: Annotated[Path, typer.Option("--data", help="CSV or Parquet file, one row per person.")],
    label: Annotated[str, typer.Option("--label", help="Column of true labels.")],
    pred: Annotated[str, typer.Option("--pred", help="Column of predicted labels.")],
    group: Annotated[str, typer.Option("--group", help="Column of protected groups.")],
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels", help="Comma-separated class labels in order (default: sorted values)."
        ),
    ] = None,
    sample_weight: Annotated[
        str | None,
        typer.Option(
            "--sample-weight",
            help="Column of non-negative row weights, e.g. survey weights (default: each row 1).",
        ),
    ] = None,
    greedy_attempts: Annotated[
        int,
        typer.Option(
            "--greedy-attempts", help="Random label orders tried by the greedy upper bound."
        ),
    ] = 10,
    n_restarts: Annotated[
        int,
        typer.Option(
            "--n-restarts",
            help="Starts of the aggregate regime: the known-regime solution, then random ones.",
        ),
    ] = 5,
    restarts: OldRestartsOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    no_aggregate: Annotated[
        bool,
        typer.Option("--no-aggregate", help="Skip the aggregate-regime estimate (faster)."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write result.json and dcp.png into this directory."),
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Certified lower/upper bounds on multiclass DCP from labels, predictions and groups.

    DCP is the fraction of the population treated off the closest common
    baseline of P(prediction | true label); it is 0 exactly under multiclass
    equalized odds.

    --pred holds predicted class labels: a column of scores (a number with a fractional part,
    or more values the labels lack than the labels have classes) is refused; threshold it first.

    --sample-weight names a column of row weights (survey or design weights): each row counts as
    its weight in every share; a row without a weight is refused, not dropped.

    A --out that already holds a DCP result (result.json, dcp.png, dcp_aggregate.png) is refused
    unless --overwrite, which replaces it.
    """
    import pandas as pd

    from trustlab.audit.table import check_predicted_labels
    from trustlab.fairness import multiclass_dcp

    refuse_existing(out, overwrite, DCP_OUTPUTS, "a DCP result")
    # exact: groups 01 and 1 (or 1 and 1.0) stay two groups, a class "NA" stays a class
    table = read_table(data, "--data", encoding=encoding, exact_columns=(label, pred, group))
    columns = {"--label": label, "--pred": pred, "--group": group}
    if sample_weight is not None:
        columns["--sample-weight"] = sample_weight
    require_columns(table, columns)
    if sample_weight is not None:
        _check_weight_role(sample_weight, columns)
        _check_weights(table[sample_weight])
    table = _drop_missing(table, [label, pred, group])
    table = _integer_like(table, label, pred)
    label_list = _parse_labels(labels, table[label], table[pred])
    numbers = pd.api.types.is_numeric_dtype
    if label_list is None and numbers(table[label]) == numbers(table[pred]):
        # A score column would be read as hundreds of classes: refuse it as the audit does (with
        # --labels every prediction must be one of them; mixed types are named by multiclass_dcp)
        check_predicted_labels(table[label].to_numpy(), table[pred].to_numpy(), "--pred")
    with progress(err_console.is_terminal) as bar, native_stdout_to_stderr():
        bar.add_task("computing DCP bounds", total=None)
        result = multiclass_dcp(
            table[label].to_numpy(),
            table[pred].to_numpy(),
            table[group].to_numpy(),
            labels=label_list,
            sample_weight=None if sample_weight is None else _numbers(table[sample_weight]),
            greedy_attempts=greedy_attempts,
            n_restarts=renamed_option(n_restarts, restarts, "--n-restarts", "--restarts"),
            random_state=seed,
            aggregate=not no_aggregate,
        )
    emit(result, as_json)
    remove_stale(out, ("dcp_aggregate.png",))  # a replaced dcp-aggregate result's figure
    save(result, out, as_json)


AGGREGATE_HELP = """Estimate DCP from aggregate statistics only.

A --out that already holds a DCP result (result.json, dcp.png, dcp_aggregate.png) is refused
unless --overwrite, which replaces it.

"""


@app.command("dcp-aggregate", help=AGGREGATE_HELP + AGGREGATE_FORMAT)
def dcp_aggregate_command(
    data: Annotated[Path, typer.Option("--data", help="AGG.csv (see the format above).")],
    beta: Annotated[
        float, typer.Option("--beta", help="1 for pure DCP; below 1 also counts errors.")
    ] = 1.0,
    n_restarts: Annotated[
        int,
        typer.Option(
            "--n-restarts",
            help="Starts: the independence start, then random ones (the best one is kept).",
        ),
    ] = 5,
    restarts: OldRestartsOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Also write result.json and dcp_aggregate.png into this directory."
        ),
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.fairness import aggregates_from_table, dcp_from_aggregates

    refuse_existing(out, overwrite, DCP_OUTPUTS, "a DCP result")
    # the group column is names: "01" stays "01", and "1" and "1.0" are two groups
    groups_as_text = {"dtype": {"group": str}, "exact_columns": ("group",)}
    raw = read_table(data, "--data", encoding=encoding, **groups_as_text)
    if raw.shape[1] > 1 and raw.columns[0] == "Unnamed: 0":  # the row index pandas' to_csv writes
        raw = raw.iloc[:, 1:]
    table = aggregates_from_table(raw)
    with progress(err_console.is_terminal) as bar, native_stdout_to_stderr():
        bar.add_task("estimating DCP from aggregates", total=None)
        result = dcp_from_aggregates(
            table.group_weights,
            table.label_dist,
            table.pred_dist,
            beta=beta,
            n_restarts=renamed_option(n_restarts, restarts, "--n-restarts", "--restarts"),
            random_state=seed,
            labels=table.labels,
            groups=table.groups,
        )
    emit(result, as_json)
    remove_stale(out, ("dcp.png",))  # a replaced dcp result's figure
    save(result, out, as_json)


def _drop_missing(table, columns: list[str]):
    missing = table[columns].isna().any(axis=1)
    if missing.any():
        tell(
            f"trustlab: note: dropped {int(missing.sum())} of {len(table)} rows with a missing "
            f"value in {', '.join(columns)}",
            as_json=True,
        )
        table = table.loc[~missing].reset_index(drop=True)
        for column in columns:
            # a column of whole numbers with an empty cell was read as floats: back to integers,
            # so labels stay 0, 1, 2 (not 0.0, 1.0, 2.0) and match an integer column beside it
            if len(table) and _whole(table[column]):
                table[column] = table[column].astype("int64")
    if len(table) == 0:
        raise InputError(
            "--data: expected rows with a label, prediction and group, got a table without rows",
            argument="--data",
        )
    return table


def _check_weight_role(column: str, columns: dict[str, str]) -> None:
    """The weight column is none of --label, --pred, --group (the classes or group names would
    weigh the rows: class 0 would weigh 0 and vanish)."""
    for option, other in columns.items():
        if option != "--sample-weight" and other == column:
            raise InputError(
                f"--sample-weight: expected a column of row weights other than --label, --pred "
                f"and --group, got {column!r}, the {option} column",
                argument="--sample-weight",
            )


def _check_weights(values) -> None:
    """A weight column holds a finite non-negative number on every row. Checked here, before
    rows with a missing label are dropped, so an error names the row of the file (the library
    would name its position among the rows kept)."""
    import numpy as np
    import pandas as pd

    if values.dtype.kind == "b":
        raise InputError.bad("--sample-weight", "a column of numbers", "True/False values")
    numbers = pd.to_numeric(values, errors="coerce")
    text = (values.notna() & numbers.isna()).to_numpy()
    if text.any():
        raise InputError.bad("--sample-weight", "a column of numbers", values[text].iloc[0])
    missing = int(values.isna().sum())
    if missing:
        first = int(values.isna().to_numpy().argmax()) + 1
        raise InputError(
            f"--sample-weight: expected a weight on every row, got {missing} "
            f"{'row' if missing == 1 else 'rows'} without one (the first is data row {first})",
            argument="--sample-weight",
        )
    numbers = numbers.to_numpy(dtype=float)
    for bad, expected in ((~np.isfinite(numbers), "finite"), (numbers < 0, "non-negative")):
        if bad.any():
            first = int(bad.argmax())
            raise InputError(
                f"--sample-weight: expected {expected} weights, got {numbers[first]:g} in data "
                f"row {first + 1} ({int(bad.sum())} such value(s) in all)",
                argument="--sample-weight",
            )


def _numbers(values):
    import pandas as pd

    return pd.to_numeric(values).to_numpy(dtype=float)


def _whole(values) -> bool:
    """A float column holding only whole numbers that int64 keeps exactly."""
    return values.dtype.kind == "f" and bool(
        ((values == values.round()) & (values.abs() < 2**53)).all()
    )


def _integer_like(table, label: str, pred: str):
    """Whole floats (1.0, 2.0 as written by a float array) beside an integer label or prediction
    column become integers, so the classes read 1, 2 (they read 1.0, 2.0)."""
    for column, other in ((label, pred), (pred, label)):
        if table[other].dtype.kind in "iu" and _whole(table[column]):
            table[column] = table[column].astype("int64")
    return table


def _parse_labels(text: str | None, y_true, y_pred):
    """``--labels a,b,c`` as a list: numbers when the label column holds numbers (the library
    checks that they cover the data)."""
    import pandas as pd

    if text is None:
        return None
    labels = [t.strip() for t in text.split(",") if t.strip()]
    if not labels:
        raise InputError.bad("--labels", "comma-separated class labels", text)
    if pd.api.types.infer_dtype(y_true, skipna=True) == "boolean":
        # True/False as written in the file (a bool column, or Python bools after a dropped row)
        truth = {"true": True, "false": False}
        if not all(t.lower() in truth for t in labels):
            raise InputError.bad("--labels", "True and False, like the label column", text)
        return [truth[t.lower()] for t in labels]
    if not pd.api.types.is_numeric_dtype(y_true):
        return _as_written(labels, set(y_true.tolist()) | set(y_pred.tolist()))
    if pd.api.types.is_integer_dtype(y_true):
        try:  # exactly: float() rounds a class id beyond 2**53 to another id
            return [int(t) for t in labels]
        except ValueError:
            pass  # 1e3 or 2.5: read as floats below
    try:
        numbers = [float(t) for t in labels]
    except ValueError:
        raise InputError.bad("--labels", "numbers, like the label column", text) from None
    integral = pd.api.types.is_integer_dtype(y_true) and all(x.is_integer() for x in numbers)
    return [int(x) for x in numbers] if integral else numbers


def _as_written(labels: list[str], values: set) -> list[str]:
    """Each stripped --labels name as the class is written in the data: a class 'cat A ' (a
    space kept by the CSV reader) is named by 'cat A' (the stripped name matches no class)."""
    spaced = {}
    for value in values:
        if isinstance(value, str) and value not in labels:
            spaced.setdefault(value.strip(), []).append(value)
    return [
        spaced[name][0] if name not in values and len(spaced.get(name, ())) == 1 else name
        for name in labels
    ]

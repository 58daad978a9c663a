"""``trustlab fairness``: multiclass disparate conditional prediction (DCP) from the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from trustlab._checks import check_in_range, check_positive_int
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    emit,
    err_console,
    native_stdout_to_stderr,
    progress,
    read_table,
    require_columns,
)
from trustlab.errors import InputError

__all__ = ["app", "read_aggregates", "AGGREGATE_FORMAT"]

app = typer.Typer(
    no_args_is_help=True,
    help="Fairness audits: multiclass disparate conditional prediction (DCP).",
)

# Shares in a row may be rounded (e.g. published percentages); within this they are renormalised.
SHARE_TOLERANCE = 1e-3

AGGREGATE_FORMAT = """\
AGG.csv has one row per group and these columns:

  group        the group's name
  weight       the group's share of the population (the column sums to 1)
  label:NAME   per class NAME: share of the group whose true label is NAME
  pred:NAME    per class NAME: share of the group predicted as NAME

Each row's label: shares sum to 1, and so do its pred: shares; the same
class names appear in both. Sums within 0.001 of 1 are renormalised.
Example with the classes yes and no:

  group,weight,label:yes,label:no,pred:yes,pred:no
  north,0.4,0.30,0.70,0.25,0.75
  south,0.6,0.50,0.50,0.55,0.45
"""


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
    greedy_attempts: Annotated[
        int,
        typer.Option(
            "--greedy-attempts", help="Random label orders tried by the greedy upper bound."
        ),
    ] = 10,
    restarts: Annotated[
        int, typer.Option("--restarts", help="Random restarts of the aggregate regime.")
    ] = 5,
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
) -> None:
    """Certified lower/upper bounds on multiclass DCP from labels, predictions and groups.

    DCP is the fraction of the population treated off the closest common
    baseline of P(prediction | true label); it is 0 exactly under multiclass
    equalized odds.
    """
    from trustlab.fairness import multiclass_dcp

    greedy_attempts = check_positive_int(greedy_attempts, "--greedy-attempts")
    restarts = check_positive_int(restarts, "--restarts")
    seed = check_positive_int(seed, "--seed", minimum=0)
    table = read_table(data)
    require_columns(table, {"--label": label, "--pred": pred, "--group": group})
    table = _drop_missing(table, [label, pred, group])
    label_list = _parse_labels(labels, table[label], table[pred])
    with progress(err_console.is_terminal) as bar, native_stdout_to_stderr():
        bar.add_task("computing DCP bounds", total=None)
        result = multiclass_dcp(
            table[label].to_numpy(),
            table[pred].to_numpy(),
            table[group].to_numpy(),
            labels=label_list,
            greedy_attempts=greedy_attempts,
            restarts=restarts,
            random_state=seed,
            aggregate=not no_aggregate,
        )
    emit(result, as_json)
    if out is not None:
        _write_outputs(result, out, "dcp.png", as_json)


@app.command(
    "dcp-aggregate", help="Estimate DCP from aggregate statistics only.\n\n" + AGGREGATE_FORMAT
)
def dcp_aggregate_command(
    data: Annotated[Path, typer.Option("--data", help="AGG.csv (see the format above).")],
    beta: Annotated[
        float, typer.Option("--beta", help="1 for pure DCP; below 1 also counts errors.")
    ] = 1.0,
    restarts: Annotated[
        int, typer.Option("--restarts", help="Random restarts (the best one is kept).")
    ] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Also write result.json and dcp_aggregate.png into this directory."
        ),
    ] = None,
) -> None:
    from trustlab.fairness import dcp_from_aggregates

    beta = check_in_range(beta, "--beta", 0.0, 1.0)
    restarts = check_positive_int(restarts, "--restarts")
    seed = check_positive_int(seed, "--seed", minimum=0)
    groups, weights, label_names, label_dist, pred_dist = read_aggregates(read_table(data))
    with progress(err_console.is_terminal) as bar, native_stdout_to_stderr():
        bar.add_task("estimating DCP from aggregates", total=None)
        result = dcp_from_aggregates(
            weights,
            label_dist,
            pred_dist,
            beta=beta,
            restarts=restarts,
            random_state=seed,
            labels=label_names,
            groups=groups,
        )
    emit(result, as_json)
    if out is not None:
        _write_outputs(result, out, "dcp_aggregate.png", as_json)


def read_aggregates(table):
    """Parse and check an aggregate table (see ``AGGREGATE_FORMAT``).

    Returns
    -------
    groups : list of str
    weights : numpy.ndarray, shape (G,)
    label_names : list of str
    label_dist, pred_dist : numpy.ndarray, shape (G, K)
        Rows renormalised to sum to exactly 1.
    """
    import numpy as np

    columns = [str(c) for c in table.columns]
    require_columns(table, {"--data (group column)": "group", "--data (weight column)": "weight"})
    label_names = [c.removeprefix("label:") for c in columns if c.startswith("label:")]
    pred_names = [c.removeprefix("pred:") for c in columns if c.startswith("pred:")]
    unexpected = [c for c in columns if c not in ("group", "weight") and ":" not in c]
    unexpected += [c for c in columns if ":" in c and not c.startswith(("label:", "pred:"))]
    if unexpected:
        raise _bad_table(
            "only group, weight, label:NAME and pred:NAME columns", f"column {unexpected[0]!r}"
        )
    if len(label_names) < 2:
        raise _bad_table(
            "label:NAME columns for at least 2 classes", f"{len(label_names)} label: column(s)"
        )
    for name in label_names:
        if name not in pred_names:
            raise _bad_table(f"a column 'pred:{name}' to match 'label:{name}'", "none")
    for name in pred_names:
        if name not in label_names:
            raise _bad_table(f"a column 'label:{name}' to match 'pred:{name}'", "none")
    groups = [str(g) for g in table["group"].tolist()]
    if len(groups) < 2:
        raise _bad_table("one row per group, at least 2 groups", f"{len(groups)} row(s)")
    duplicated = sorted({g for g in groups if groups.count(g) > 1})
    if duplicated:
        raise _bad_table("one row per group", f"group {duplicated[0]!r} repeated")
    weights = _numbers(table, "weight", groups)
    label_dist = np.column_stack([_numbers(table, f"label:{n}", groups) for n in label_names])
    pred_dist = np.column_stack([_numbers(table, f"pred:{n}", groups) for n in label_names])
    _check_sums_to_one(weights[None, :], ["all groups"], "weight")
    _check_sums_to_one(label_dist, groups, "label:*")
    _check_sums_to_one(pred_dist, groups, "pred:*")
    return (
        groups,
        weights / weights.sum(),
        label_names,
        label_dist / label_dist.sum(axis=1, keepdims=True),
        pred_dist / pred_dist.sum(axis=1, keepdims=True),
    )


def _bad_table(expected: str, got: str) -> InputError:
    return InputError(f"--data: expected {expected}, got {got}", argument="--data")


def _numbers(table, column: str, groups: list[str]):
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
    for i, value in enumerate(values):
        if not math.isfinite(value) or value < 0:
            raise _bad_table(
                f"non-negative numbers in column {column!r}",
                f"{table[column].iloc[i]!r} in the row of group {groups[i]!r}",
            )
    return np.asarray(values)


def _check_sums_to_one(shares, rows: list[str], columns: str) -> None:
    for row, total in zip(rows, shares.sum(axis=1), strict=True):
        if abs(total - 1.0) > SHARE_TOLERANCE:
            where = "the weight column" if row == "all groups" else f"the row of group {row!r}"
            raise _bad_table(f"{columns} shares summing to 1 in {where}", f"sum {total:.6g}")


def _drop_missing(table, columns: list[str]):
    missing = table[columns].isna().any(axis=1)
    if missing.any():
        err_console.print(
            f"note: dropped {int(missing.sum())} of {len(table)} rows with a missing value in "
            f"{', '.join(columns)}",
            highlight=False,
            markup=False,
        )
        table = table.loc[~missing].reset_index(drop=True)
    if len(table) == 0:
        raise InputError.bad("--data", "rows with a label, prediction and group", "none")
    return table


def _parse_labels(text: str | None, y_true, y_pred):
    """``--labels a,b,c`` as a list (numbers when the label column holds numbers), checked to
    cover every true and predicted label."""
    import pandas as pd

    if text is None:
        return None
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if len(tokens) < 2:
        raise InputError.bad("--labels", "at least 2 comma-separated labels", text)
    labels = tokens
    if pd.api.types.is_numeric_dtype(y_true):
        try:
            numbers = [float(t) for t in tokens]
        except ValueError:
            raise InputError.bad("--labels", "numbers, like the label column", text) from None
        integral = pd.api.types.is_integer_dtype(y_true) and all(x.is_integer() for x in numbers)
        labels = [int(x) for x in numbers] if integral else numbers
    seen = pd.unique(pd.concat([y_true, y_pred], ignore_index=True))
    missing = [v for v in seen.tolist() if v not in labels]
    if missing:
        shown = ", ".join(map(str, missing[:5]))
        raise InputError(
            f"--labels: expected every value of the --label and --pred columns, got {text!r}, "
            f"which lacks {shown}",
            argument="--labels",
        )
    return labels


def _write_outputs(result, out: Path, picture: str, as_json: bool) -> None:
    from matplotlib.figure import Figure

    from trustlab.report import to_jsonable

    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "result.json"
    json_path.write_text(json.dumps(to_jsonable(result.to_dict()), indent=2, allow_nan=False))
    figure = Figure(figsize=(7, 4))
    result.plot(ax=figure.add_subplot())
    png_path = out / picture
    figure.savefig(png_path, dpi=144, bbox_inches="tight")
    message = f"wrote {json_path} and {png_path}"
    if as_json:  # keep stdout pure JSON
        err_console.print(message, highlight=False, markup=False)
    else:
        typer.echo(message)

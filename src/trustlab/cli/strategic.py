"""``trustlab strategic``: feature markets induced by a linear classifier."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    emit,
    progress,
    read_table,
    require_columns,
    save,
)
from trustlab.cli._runs import OverwriteOption, refuse_existing
from trustlab.errors import InputError

__all__ = ["app", "parse_weights"]

app = typer.Typer(
    no_args_is_help=True,
    help="Strategic classification: the feature market a classifier induces, and learners that "
    "anticipate it.",
)

PRICE_HELP = """The revenue-maximising feature price your linear classifier induces on a table.

The classifier accepts a row when sum_j w_j * x_j + intercept >= 0. Rejected users buy the
cheapest increase of positive-weight features that crosses the boundary, if their budget allows;
a seller sets the price to maximise revenue. The price is per unit of distance along w (the
per-feature prices, price * max(w_j, 0) / ||w||, are printed with --json).

--weights names each feature column with its weight: "income=0.8,age=-0.1". Columns not named
are not features. --budget-col holds each user's budget (non-negative). With --label (0/1,
-1/+1 or true/false; 1 = should be accepted) the accuracy and social burden are reported too.
--price evaluates the market at a price you choose instead of the optimal one.

--out DIR writes result.json (every number printed), users.csv (per row: distance to the
boundary, budget, whether the user buys, what they pay, the decision after the market) and
revenue.png (revenue against price, optimum marked); a --out that already holds them is
refused unless --overwrite.

Example:

  trustlab strategic price --data applicants.csv --budget-col savings \\
      --weights "income=0.8,tenure=0.3" --intercept -2.5 --label repaid --out market/
"""

SIMULATE_HELP = """Naive, fixed-cost and market-aware (MASC) learners under the market they induce.

Fits the three learners on a training split and forms the market each induces on the test
users. --data synthetic: --n-samples users of a 2-D Gaussian mixture with log-normal budgets
whose median is --budget-ratio times larger for positives; chile: positive = vote 'Y', budget =
income; logan: positive = a professional occupation, budgets simulated from the father's
occupational status (see docs/strategic-markets.md). The tables are used whole: --n-samples and
--budget-ratio are refused with them.

--out DIR writes result.json (every number, the revenue curves included), revenue.png (revenue
against price, optima marked) and accuracy.png (accuracy under the induced market per learner,
with the no-market benchmark); a --out that already holds them is refused unless --overwrite.

Example:

  trustlab strategic simulate --out sim/ --data synthetic --seed 0
"""


PRICE_FILES = ("result.json", "users.csv", "revenue.png")
SIMULATE_FILES = ("result.json", "revenue.png", "accuracy.png")


def parse_weights(text: str) -> dict[str, float]:
    """``"a=1.5,b=-2"`` -> ``{"a": 1.5, "b": -2.0}`` (names may not repeat)."""
    weights: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not name or not math.isfinite(number):
            raise InputError.bad("--weights", "COLUMN=NUMBER pairs separated by commas", text)
        if name in weights:
            raise InputError.bad("--weights", "each column named once", name)
        weights[name] = number
    return weights


def _labels_as_positive(column):
    """A label column (0/1, -1/+1, true/false) as 0/1 numbers for the market functions."""
    import numpy as np

    values = column.to_numpy()
    if values.dtype.kind in "OUS" or str(column.dtype) in ("str", "string"):
        lowered = column.astype(str).str.strip().str.lower()
        mapping = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "-1": 0.0, "+1": 1.0}
        unknown = sorted(set(lowered) - set(mapping))
        if unknown:
            raise InputError.bad("--label", "0/1, -1/+1 or true/false labels", unknown[:5])
        if {"0", "-1"} <= set(lowered):  # -1, 0 and 1: three classes, as numbers are refused
            raise InputError.bad(
                "--label", "one convention for negatives (0 or -1, not both)", sorted(set(lowered))
            )
        return lowered.map(mapping).to_numpy(dtype=np.float64)
    return values


@app.command("price", help=PRICE_HELP)
def price_command(
    data: Annotated[Path, typer.Option("--data", help="CSV or Parquet file, one row per user.")],
    weights: Annotated[
        str, typer.Option("--weights", help='Feature weights, "COLUMN=NUMBER,COLUMN=NUMBER".')
    ],
    budget_col: Annotated[str, typer.Option("--budget-col", help="Column of budgets (>= 0).")],
    intercept: Annotated[float, typer.Option("--intercept", help="The intercept b0.")] = 0.0,
    label: Annotated[
        str | None, typer.Option("--label", help="Optional column of true binary labels.")
    ] = None,
    price: Annotated[
        float | None, typer.Option("--price", help="Evaluate at this price, not the optimum.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write result.json, users.csv and revenue.png here."),
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.strategic import market_outcome, market_price

    # 1e400 reads as inf; nan is no price; the library's "inf for no market" is not offered here
    if price is not None and not (math.isfinite(price) and price >= 0):
        raise InputError(
            f"--price: expected a finite non-negative price (a number beyond float64 such as "
            f"1e400 reads as inf; leave --price out for the revenue-maximising price), got {price}",
            argument="--price",
        )
    refuse_existing(out, overwrite, PRICE_FILES, "a market")
    table = read_table(data, "--data", encoding=encoding)
    named = parse_weights(weights)
    for column in named:
        require_columns(table, {"--weights": column})
    require_columns(table, {"--budget-col": budget_col, "--label": label})
    features = _numeric(table[list(named)], "--weights")  # the column names name the features
    budgets = _numeric(table[[budget_col]], "--budget-col")[budget_col]
    labels = None if label is None else _labels_as_positive(table[label])
    w = list(named.values())
    with progress() as bar:
        bar.add_task(f"pricing the market of {len(table)} users", total=None)
        if price is None:
            result = market_price(w, intercept, features, budgets, y=labels)
        else:
            result = market_outcome(w, intercept, features, budgets, price, y=labels)
    emit(result, as_json)
    save(result, out, as_json)


def _numeric(frame, option: str):
    """The chosen columns as float64, finite (text, NaN or inf is refused naming the option, the
    column and the first such row); the library checks the rest (budgets >= 0)."""
    import numpy as np
    import pandas as pd

    try:
        numbers = frame.astype(np.float64)
    except (TypeError, ValueError) as exc:
        for name in frame.columns:  # name the first column and row that is not a number
            column = frame[name]
            text = pd.to_numeric(column, errors="coerce").isna() & column.notna()
            if text.any():
                row = int(np.argmax(text.to_numpy()))
                raise InputError(
                    f"{option}: expected numbers in column {name!r}, got {column.iloc[row]!r} "
                    f"at row {row} (counted from 0 after the header; {int(text.sum())} "
                    "value(s) that are not numbers in all)",
                    argument=option,
                ) from exc
        raise InputError.bad(option, "numeric columns", list(frame.dtypes.astype(str))) from exc
    bad = ~np.isfinite(numbers.to_numpy())
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"{option}: expected finite values in column {numbers.columns[col]!r}, got "
            f"{numbers.iat[row, col]} at row {row} (counted from 0 after the header; "
            f"{int(bad.sum())} non-finite value(s) in all)",
            argument=option,
        )
    return numbers


@app.command("simulate", help=SIMULATE_HELP)
def simulate_command(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write result.json, revenue.png and accuracy.png here."),
    ] = None,
    data: Annotated[str, typer.Option("--data", help="synthetic, chile or logan.")] = "synthetic",
    seed: Annotated[int, typer.Option("--seed", help="Random seed (data, split, training).")] = 0,
    n_samples: Annotated[
        int | None,
        typer.Option(
            "--n-samples", help="Users in the synthetic population (default 2000; synthetic only)."
        ),
    ] = None,
    budget_ratio: Annotated[
        float | None,
        typer.Option(
            "--budget-ratio",
            help="Synthetic: positives' median budget / negatives' (default 4; synthetic only).",
        ),
    ] = None,
    max_epochs: Annotated[
        int, typer.Option("--max-epochs", help="Epoch cap of the trained learners.")
    ] = 60,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.strategic import simulate_market

    refuse_existing(out, overwrite, SIMULATE_FILES, "a simulation")
    for option, value in (("--n-samples", n_samples), ("--budget-ratio", budget_ratio)):
        if value is not None and data in ("chile", "logan"):  # the tables would ignore it
            raise InputError(
                f"{option}: expected it only with --data synthetic (the {data} table is used "
                f"whole), got {value:g} with --data {data}",
                argument=option,
            )
    with progress() as bar:
        task = bar.add_task("simulating", total=5)  # the five stages simulate_market() reports
        started: list[str] = []

        def advance(text: str) -> None:
            if started:
                bar.advance(task)
            started.append(text)
            bar.update(task, description=text)

        result = simulate_market(
            data,
            n_samples=2000 if n_samples is None else n_samples,
            budget_ratio=4.0 if budget_ratio is None else budget_ratio,
            max_epochs=max_epochs,
            random_state=seed,
            callback=advance,
        )
        bar.advance(task)
    emit(result, as_json)
    save(result, out, as_json)

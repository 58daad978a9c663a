"""``trustlab audit``: audit a dataset and its models, write out/report.html and out/report.json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    TrustPickleOption,
    TrustTypeOption,
    console,
    emit,
    err_console,
    native_stdout_to_stderr,
    progress,
)

__all__ = ["audit"]


def audit(
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            help="A bundled dataset name (chile, logan) or a CSV / Parquet file. Default: chile.",
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label", help="Label column (required with a file; a bundled set knows its own)."
        ),
    ] = None,
    group: Annotated[
        str | None, typer.Option("--group", help="Protected-group column (required with a file).")
    ] = None,
    pred: Annotated[
        str | None,
        typer.Option(
            "--pred", help="Audit the predictions in this column instead of training models."
        ),
    ] = None,
    model: Annotated[
        Path | None,
        typer.Option(
            "--model",
            help="Audit this fitted model: a .skops file (.pkl/.joblib only with --trust-pickle).",
        ),
    ] = None,
    trust_pickle: TrustPickleOption = False,
    trust_type: TrustTypeOption = None,
    group_as_feature: Annotated[
        bool | None,
        typer.Option(
            "--group-as-feature/--no-group-as-feature",
            help="Let the models use the group column as a feature. Default: a bundled dataset "
            "uses its declared features, a file leaves the group column out.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("out"),
    test_size: Annotated[
        float,
        typer.Option(
            "--test-size", help="Share of rows held out for the audit when models are trained."
        ),
    ] = 0.5,
    seed: Annotated[
        int, typer.Option("--seed", help="Random seed of the split, models and methods.")
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the file paths and headline numbers as JSON.")
    ] = False,
) -> None:
    """Audit a dataset and its models; write a self-contained report.html and report.json.

    With no options: load the bundled chile data, train logistic regression,
    a random forest and gradient boosting on half the rows, audit the rest.

    With --data FILE --label COL --group COL: audit your table. Add --pred COL
    to audit existing predictions, or --model FILE to audit your fitted model;
    with neither, the default models are trained on your data.
    """
    from trustlab.audit import run_audit

    # The bar is drawn only on a terminal: logs and CI get no stray lines on stderr.
    with progress(err_console.is_terminal) as bar, native_stdout_to_stderr():
        task = bar.add_task("auditing", total=None)

        def show(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        result = run_audit(
            data,
            label=label,
            group=group,
            pred=pred,
            model=model,
            trust_pickle=trust_pickle,
            trust_types=trust_type or (),
            out=out,
            test_size=test_size,
            random_state=seed,
            group_as_feature=group_as_feature,
            progress=show,
        )
    if as_json:
        emit(result, as_json=True)
    else:
        console.print(result.summary(), highlight=False, markup=False)

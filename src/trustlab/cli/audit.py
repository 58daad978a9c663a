"""``trustlab audit``: audit a dataset and its models, write out/report.html and out/report.json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.audit.models import ZOO_NAMES
from trustlab.audit.sections import SECTION_MODULES
from trustlab.cli._common import (
    EncodingOption,
    TrustPickleOption,
    TrustTypeOption,
    YesOption,
    announce,
    console,
    emit,
    native_stdout_to_stderr,
    progress,
    tell,
)

__all__ = ["audit"]

# Rows trained on and audited that run without --yes: far beyond usual tables (the bundled
# chile audit, 2,532 rows, takes seconds), so only a wrong file or a runaway table needs --yes.
ROW_LIMIT = 2_000_000


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
            help="Let the models use the group column as a feature (not with --pred: no model "
            "is trained). Default: a bundled dataset uses its declared features, a file leaves "
            "the group column out.",
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="A column the models must not use as a feature (a row id, a leaked outcome); "
            "repeat it for several. Not with --pred or --model: nothing is trained.",
        ),
    ] = None,
    zoo: Annotated[
        list[str] | None,
        typer.Option(
            "--zoo",
            help="Train only this default model (repeatable, or a comma list): "
            f"{', '.join(ZOO_NAMES)}. Default: all. Not with --pred or --model.",
        ),
    ] = None,
    section: Annotated[
        list[str] | None,
        typer.Option(
            "--section",
            help="Build only this report section (repeatable, or a comma list): "
            f"{', '.join(SECTION_MODULES)}. Default: every section the audit can build.",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Output directory: report.html, report.json, predictions.csv and, for the "
            "default models, models/<name>.skops. One that already holds an audit is refused "
            "unless --overwrite.",
        ),
    ] = Path("out"),
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace an earlier audit in --out (its report, predictions.csv and the "
            "models it saved; nothing else there is touched, never the --model file).",
        ),
    ] = False,
    encoding: EncodingOption = None,
    test_size: Annotated[
        float | None,
        typer.Option(
            "--test-size",
            help="Share of rows held out for the audit when the default models are trained "
            "(default 0.5; not with --pred or --model, which audit every row).",
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Random seed of the split, models and methods (0 to 2**32-1)."),
    ] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the file paths and headline numbers as JSON.")
    ] = False,
    yes: YesOption = False,
    participation: Annotated[
        list[Path] | None,
        typer.Option(
            "--participation",
            help="A participation answers YAML (repeatable, one per assessor): adds the "
            "participation assessment section (see 'trustlab governance').",
        ),
    ] = None,
) -> None:
    """Audit a dataset and its models; write a self-contained report.html and report.json.

    With no options: load the bundled chile data, train logistic regression,
    a random forest and gradient boosting on half the rows, audit the rest.

    With --data FILE --label COL --group COL: audit your table. Add --pred COL
    to audit existing predictions, or --model FILE to audit your fitted model;
    with neither, the default models are trained on your data.

    Beside the report, --out gets predictions.csv (each audited row's id in
    the input table, its label and group, every model's prediction and class
    probabilities) and each trained model as models/<name>.skops. Re-running
    into a folder that holds an audit is refused unless --overwrite.

    It says on stderr what it will do before it starts, logs progress there
    (lines when stderr is not a terminal) and asks for --yes beyond
    2,000,000 rows.
    """
    from trustlab.audit import run_audit
    from trustlab.audit.outputs import previous_audit
    from trustlab.errors import InputError

    # run_audit refuses --test-size with --pred or --model itself; it refuses --group-as-feature
    # with --pred too, but names the argument group_as_feature: here the flag given is named
    if group_as_feature is not None and pred is not None:
        given = "--group-as-feature" if group_as_feature else "--no-group-as-feature"
        raise InputError(
            f"{given}: only when a model predicts; with --pred the column {pred!r} is audited as "
            "it is (no model is trained); leave it out",
            argument=given,
        )

    def check_plan(plan) -> None:  # the input is checked: say what comes, or ask for --yes
        announce(plan.describe(), work=plan.rows, limit=ROW_LIMIT, yes=yes, unit=" rows")
        previous = previous_audit(out) if overwrite else None
        if previous is not None:
            tell(f"trustlab: replacing the earlier audit in {out} ({previous})", as_json=True)

    # A bar on a terminal; elsewhere a line on stderr every few seconds once it runs long.
    with progress() as bar, native_stdout_to_stderr():
        task = bar.add_task("audit", total=None)

        def show(description: str, done: int, total: int) -> None:
            if description == "done":  # the last step's name stays: "...: done in 45 s"
                bar.update(task, completed=done, total=total)
            else:
                bar.update(task, description=f"audit: {description}", completed=done, total=total)

        result = run_audit(
            data,
            label=label,
            group=group,
            pred=pred,
            model=model,
            trust_pickle=trust_pickle,
            trust_types=trust_type or (),
            out=out,
            overwrite=overwrite,
            encoding=encoding,
            test_size=test_size,
            random_state=seed,
            group_as_feature=group_as_feature,
            exclude=exclude or (),
            sections=_names(section),
            models=_names(zoo),
            progress=show,
            plan=check_plan,
            participation=participation or None,
        )
    if as_json:
        emit(result, as_json=True)
    else:
        console.print(result.summary(), highlight=False, markup=False)


def _names(values: list[str] | None) -> list[str] | None:
    """The --section or --zoo values, each split at commas (run_audit checks the names; an empty
    one is passed on, to be refused, not read as none given)."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",")]

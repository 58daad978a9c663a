"""``trustlab safety context``: CASE-Bench, context-aware safety judging and human statistics.

* ``score OUTPUTS.json --mode binary|score|logits [--model NAME]``: scores one model's output
  file in the CASE-Bench authors' released format; ``--json`` prints exactly the headline
  metrics of the mode; ``--out DIR`` writes the full result (intervals, parse failures,
  mismatches by context and category).
* ``stats [DATA.json | --synthetic]``: the human statistics of a CASE-Bench data file (the
  context effect: pooled, per-query and clustered).
* ``power --p1 .65 --p2 .23 [--alpha --power --design]``: annotators needed per item.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, save
from trustlab.cli._runs import OverwriteOption, options_named, refuse_existing, remove_stale
from trustlab.errors import InputError

__all__ = ["app", "score", "stats", "power"]

app = typer.Typer(
    no_args_is_help=True,
    help="CASE-Bench: context-aware safety judging against human votes, and their statistics.",
)

# what the group's commands write into --out: a rerun with --overwrite removes the others
# (a stats run into a score's folder kept its metrics.png and by_category.json)
WRITTEN = ("result.json", "metrics.png", "by_category.json", "context_effect.png", "result.png")

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Write result.json and a picture here (score: metrics.png and by_category.json, its "
        "numbers per category; stats: context_effect.png; power: result.png).",
    ),
]


@app.command("score")
def score(
    outputs: Annotated[Path, typer.Argument(help="A model's output file (released format).")],
    mode: Annotated[str, typer.Option("--mode", help="binary, score or logits.")],
    model: Annotated[
        str | None,
        typer.Option("--model", help="The key holding the predictions (default: the only one)."),
    ] = None,
    n_bootstrap: Annotated[
        int, typer.Option("--n-bootstrap", help="Item resamples for the intervals.")
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print only the headline metrics as JSON (accuracy, safe_recall, "
            "unsafe_recall, f1_safe, f1_unsafe; with score and logits also pearson (r x 100), "
            "bce, brier). --out holds the full result.",
        ),
    ] = False,
) -> None:
    """Score a model's CASE-Bench output file against the human votes."""
    from trustlab._results import json_text
    from trustlab.safety.context import score_outputs

    refuse_existing(out, overwrite, ("result.json",))
    # the argument as the usage line names it; a prediction the mode cannot read is the file's
    with options_named(
        {"path": "OUTPUTS", "predictions": "OUTPUTS"}, {"predictions": f"read with --mode {mode}"}
    ):
        result = score_outputs(outputs, mode, model, n_bootstrap=n_bootstrap, random_state=seed)
    if as_json:
        sys.stdout.write(json_text(result.headline()))
    else:
        emit(result, False)
    _save(result, out, overwrite, as_json)


@app.command("stats")
def stats(
    data: Annotated[
        Path | None, typer.Argument(help="CASEBench_data.json (or an output file, ablated too).")
    ] = None,
    synthetic: Annotated[
        bool, typer.Option("--synthetic", help="Use trustlab's shipped synthetic set.")
    ] = False,
    alpha: Annotated[float, typer.Option("--alpha", help="Per-query significance level.")] = 0.05,
    n_bootstrap: Annotated[
        int, typer.Option("--n-bootstrap", help="Query resamples for the interval.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Human statistics: does the context change the human votes?"""
    from trustlab.safety.context import human_statistics, load_casebench, synthetic_casebench

    if (data is None) == (not synthetic):
        raise InputError("DATA: expected a data file or --synthetic (one of them)", argument="DATA")
    refuse_existing(out, overwrite, ("result.json",))
    # an ablation run's output file lacks context fields the statistics never read
    with options_named({"path": "DATA", "dataset": "DATA"}):
        dataset = synthetic_casebench() if synthetic else load_casebench(data, outputs=True)
        result = human_statistics(dataset, alpha=alpha, n_bootstrap=n_bootstrap, random_state=seed)
    emit(result, as_json)
    _save(result, out, overwrite, as_json)


@app.command("power")
def power(
    p1: Annotated[float, typer.Option("--p1", help="Safe-vote share in the first condition.")],
    p2: Annotated[
        float,
        typer.Option("--p2", help="In the second condition (one-sample: the reference, e.g. .5)."),
    ],
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    target: Annotated[float, typer.Option("--power", help="Power to reach.")] = 0.8,
    design: Annotated[
        str, typer.Option("--design", help="independent, unpooled, one-sample or paired.")
    ] = "independent",
    out: OutOption = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Votes (annotators) per item needed to detect p1 vs p2."""
    from trustlab.evaluation.statistics import sample_size

    refuse_existing(out, overwrite, ("result.json",))
    if p1 == p2 and 0.0 <= p1 <= 1.0:  # the library's message names p1, not --p1
        raise InputError.bad("--p2", f"a proportion different from --p1 ({p1:g})", p2)
    result = sample_size(p1, p2, alpha=alpha, power=target, design=design)
    emit(result, as_json)
    _save(result, out, overwrite, as_json)


def _save(result: object, out: Path | None, overwrite: bool, as_json: bool) -> None:
    written = {path.name for path in save(result, out, as_json)}
    if overwrite:
        remove_stale(out, [name for name in WRITTEN if name not in written])

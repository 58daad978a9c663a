"""``trustlab privacy``: data-specific indistinguishability (DSI) noise for a release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    emit,
    npy_reason,
    progress,
    read_numeric_table,
    renamed_option,
    save,
)
from trustlab.cli._runs import OverwriteOption, options_named, refuse_existing, remove_stale
from trustlab.errors import InputError

__all__ = ["app", "read_array"]

app = typer.Typer(
    no_args_is_help=True,
    help="Privacy and indistinguishability: optimal data-specific Gaussian noise (DSI).",
)

DSI_HELP = """Optimal data-specific Gaussian noise for a set of output differences.

--deltas holds the differences F(U) - F(U_i), one per row, shape (n, d): a .npy array, or a
.csv/.tsv/.parquet table with one numeric column per output coordinate (a CSV with a header row
of column names or with none, as numpy.savetxt writes it). The noise makes the
release (epsilon, delta)-indistinguishable between U and every U_i over --steps releases.
DSI is a guarantee relative to these reference sets; it is not differential privacy.

Ranges: --epsilon in (0, 100] (beyond, e^epsilon > 1e43 bounds nothing; a tiny epsilon is
fine); --delta in (0, 1), down to the smallest float; --steps from 1 to 10^12; a tiny epsilon
and a tiny delta together are refused where the noise multiplier would pass 1e100.

--out DIR writes result.json (every number printed), basis.npy (d, r) and factor.npy (r, r):
the noise is noise_multiplier * basis @ factor @ z with z ~ N(0, I_r). With --output F.npy it
also writes release.npy, F plus one noise draw from fresh randomness (--seed fixes it, for tests
only: a known seed lets anyone subtract the noise). A --out that already holds a result is
refused unless --overwrite.

Example:

  trustlab privacy dsi --deltas deltas.npy --epsilon 2 --delta 1e-5 --out dsi_noise/
"""


@app.command("dsi", help=DSI_HELP)
def dsi_command(
    deltas: Annotated[Path, typer.Option("--deltas", help="Differences, shape (n, d).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon, in (0, 100].")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta, in (0, 1).")],
    steps: Annotated[
        int,
        typer.Option(
            "--steps", help="Releases each difference takes part in (epochs), 1 to 10^12."
        ),
    ] = 1,
    accountant: Annotated[
        str, typer.Option("--accountant", help="exact (tight GDP) or paper (RDP conversion).")
    ] = "exact",
    budgets: Annotated[
        Path | None,
        typer.Option(
            "--budgets",
            help="Per-difference budgets c_i (.npy or table: one column or row), default 1. "
            "(epsilon, delta) is for c_i = 1: difference i gets the guarantee of noise "
            "multiplier / sqrt(c_i), looser where c_i > 1.",
        ),
    ] = None,
    max_iterations: Annotated[
        int, typer.Option("--max-iterations", help="Solver iterations cap.")
    ] = 1000,
    max_iter: Annotated[  # the old name of --max-iterations: hidden, kept for one release
        int | None, typer.Option("--max-iter", hidden=True, help="Deprecated: --max-iterations.")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            help="The noiseless output F(U) (.npy, d values) to release into --out "
            "(release.npy; needs --out).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed of the noise added to --output; default fresh randomness. Only for "
            "tests: anyone who knows the seed can subtract the noise from release.npy.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write result.json, basis.npy, factor.npy here.")
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    from trustlab.privacy import dsi_noise

    if output is not None and out is None:  # the release would be drawn and thrown away
        raise InputError(
            "--output: expected --out DIR as well, where release.npy is written (the release "
            "is not printed), got --output without --out",
            argument="--output",
        )
    refuse_existing(out, overwrite, RESULT_FILES, "a DSI result")
    rows = read_array(deltas, "--deltas", encoding)
    caps = None if budgets is None else read_budgets(budgets, encoding)
    value = None if output is None else read_array(output, "--output", encoding)
    max_iterations = renamed_option(max_iterations, max_iter, "--max-iterations", "--max-iter")
    names = {"budgets": "--budgets", "max_iter": "--max-iterations"}
    with progress() as bar, options_named(names):
        bar.add_task("solving for the optimal noise covariance", total=None)
        result = dsi_noise(
            rows,
            epsilon=epsilon,
            delta=delta,
            steps=steps,
            accountant=accountant,
            budgets=caps,
            max_iter=max_iterations,
            output=value,
            random_state=seed,
        )
    emit(result, as_json)
    if overwrite:
        remove_stale(out, RESULT_FILES)  # release.npy of an earlier run with --output
    save(result, out, as_json)


RESULT_FILES = ("result.json", "basis.npy", "factor.npy", "release.npy")


def read_budgets(path: Path, encoding: str | None = None):
    """The budgets as one column or one row of numbers (a wider table is not a list of budgets)."""
    caps = read_array(path, "--budgets", encoding)
    if sum(size > 1 for size in caps.shape) > 1:
        raise InputError.bad("--budgets", "one column or one row of budgets", caps)
    return caps.ravel()


def read_array(path: Path, name: str, encoding: str | None = None):
    """A float array from a .npy file or a numeric table."""
    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing .npy, .csv, .tsv or .parquet file", str(path))
    if path.suffix.lower() == ".npy":
        try:
            array = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            why = npy_reason(exc)
            raise InputError(f"{name}: could not read {path}: {why}", argument=name) from exc
        # a record array could not be cast (exit 1), a complex one lost its imaginary part
        if array.dtype.kind not in "biuf":
            raise InputError.bad(name, f"a .npy array of real numbers in {path}", array)
        return np.asarray(array, dtype=np.float64)
    if not path.name.lower().endswith(_TABLE_SUFFIXES):
        raise InputError.bad(
            name, "a .npy, .csv, .tsv (optionally .gz) or .parquet file", str(path)
        )
    return read_numeric_table(path, name, encoding=encoding)


_TABLE_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt", ".txt.gz", ".parquet", ".pq")

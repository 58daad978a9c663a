"""``trustlab privacy``: data-specific indistinguishability (DSI) noise for a release."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, progress, read_table
from trustlab.errors import InputError

__all__ = ["app", "read_array"]

app = typer.Typer(
    no_args_is_help=True,
    help="Privacy and indistinguishability: optimal data-specific Gaussian noise (DSI).",
)

DSI_HELP = """Optimal data-specific Gaussian noise for a set of output differences.

--deltas holds the differences F(U) - F(U_i), one per row, shape (n, d): a .npy array, or a
.csv/.tsv/.parquet table with one numeric column per output coordinate. The noise makes the
release (epsilon, delta)-indistinguishable between U and every U_i over --steps releases.
DSI is a guarantee relative to these reference sets; it is not differential privacy.

--out DIR writes dsi.json (every number printed), basis.npy (d, r) and factor.npy (r, r): the
noise is noise_multiplier * basis @ factor @ z with z ~ N(0, I_r). With --output F.npy it also
writes release.npy, F plus one noise draw (seed --seed).

Example:

  trustlab privacy dsi --deltas deltas.npy --epsilon 2 --delta 1e-5 --out dsi_noise/
"""


@dataclass(frozen=True)
class DSIReport:
    """The solved covariance and the calibration, shown together."""

    covariance: Any
    calibration: Any

    def to_dict(self) -> dict[str, Any]:
        noise_power = self.covariance.trace * self.calibration.noise_multiplier**2
        return {
            "covariance": self.covariance.to_dict(),
            "calibration": self.calibration.to_dict(),
            "expected_noise_squared_norm": float(noise_power),
            "guarantee": "data-specific indistinguishability (not differential privacy)",
        }

    def summary(self) -> str:
        return f"{self.covariance.summary()}\n{self.calibration.summary()}"


@app.command("dsi", help=DSI_HELP)
def dsi_command(
    deltas: Annotated[Path, typer.Option("--deltas", help="Differences, shape (n, d).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Target epsilon (> 0).")],
    delta: Annotated[float, typer.Option("--delta", help="Target delta, in (0, 1).")],
    steps: Annotated[
        int,
        typer.Option("--steps", help="Releases each difference takes part in (epochs)."),
    ] = 1,
    accountant: Annotated[
        str, typer.Option("--accountant", help="exact (tight GDP) or paper (RDP conversion).")
    ] = "exact",
    budgets: Annotated[
        Path | None,
        typer.Option("--budgets", help="Per-difference budgets c_i (.npy or table), default 1."),
    ] = None,
    max_iter: Annotated[int, typer.Option("--max-iter", help="Solver iterations cap.")] = 1000,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="The noiseless output F(U) (.npy, d values) to release."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed for --output.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write dsi.json, basis.npy, factor.npy here.")
    ] = None,
) -> None:
    from trustlab.privacy import calibrate, optimal_gaussian_covariance

    rows = read_array(deltas, "--deltas")
    caps = None if budgets is None else read_array(budgets, "--budgets").ravel()
    calibration = calibrate(epsilon, delta, steps, accountant)
    with progress() as bar:
        bar.add_task(f"solving for {rows.shape[0]} differences", total=None)
        covariance = optimal_gaussian_covariance(rows, budgets=caps, max_iter=max_iter)
    report = DSIReport(covariance, calibration)
    emit(report, as_json)
    released = None
    if output is not None:
        value = read_array(output, "--output")
        if value.size != covariance.dim:
            raise InputError.bad("--output", f"{covariance.dim} values", value)
        noise = covariance.sample(scale=calibration.noise_multiplier, random_state=seed)
        released = value + noise.reshape(value.shape)
    if out is not None:
        _write_outputs(report, released, out)


def read_array(path: Path, name: str):
    """A float array from a .npy file or a numeric table."""
    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise InputError.bad(name, "an existing .npy, .csv, .tsv or .parquet file", str(path))
    if path.suffix.lower() == ".npy":
        try:
            return np.asarray(np.load(path, allow_pickle=False), dtype=np.float64)
        except (OSError, ValueError) as exc:
            raise InputError(f"{name}: could not read {path}: {exc}", argument=name) from exc
    table = read_table(path, name)
    try:
        return table.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError.bad(name, "numeric columns only", list(table.dtypes.astype(str))) from exc


def _write_outputs(report: DSIReport, released, out: Path) -> None:
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    (out / "dsi.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    np.save(out / "basis.npy", report.covariance.basis)
    np.save(out / "factor.npy", report.covariance.factor)
    if released is not None:
        np.save(out / "release.npy", released)

"""``trustlab federated``: UEFL (uncertainty-based extensible-codebook federated learning)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab._results import check_output_dir
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    YesOption,
    announce,
    emit,
    progress,
    renamed_option,
    save,
    tell,
)
from trustlab.cli._runs import (
    OverwriteOption,
    counted,
    options_named,
    refuse_existing,
    remove_stale,
)

__all__ = ["app"]

app = typer.Typer(
    no_args_is_help=True,
    help="Federated learning across heterogeneous silos: UEFL, in process or on Flower.",
)

SIMULATE_HELP = """Simulate UEFL against FedAvg on shifted digit silos, in this process.

The silos are scikit-learn's 8x8 digits cut into --n-silos slices with a per-silo shift
(--shift rotation: the paper's rotations 0/-50/120 degrees; mixed: none, rotation, blur +
noise; none). UEFL trains --rounds rounds, fixes the uncertainty threshold (1 + thd) * mean
entropy, gives every silo above it a new k-means-initialised codebook and trains --rounds-plus
more rounds, up to --max-iterations iterations. The baselines run as many rounds: FedAvg (no
codebook; --baseline fedavg, the default) and/or the control (one local codebook, never
extended; --baseline vq). --baseline vq alone runs the control without FedAvg; give
--baseline fedavg --baseline vq for both. The codewords follow the paper's rule (codebook loss
only) unless --codewords task.

Rounds are reported as "8 + 6 extension rounds": the --rounds of the first iteration, then the
rounds of the extension iterations that ran; every baseline runs as many rounds as UEFL did.

It says up front what it will run; beyond 100,000 silo-epochs (rounds x silos x local epochs x
methods: hours on digits) it asks for --yes.

--out DIR gets result.json (accuracy and MC-dropout entropy per silo and round, margins),
accuracy.png, entropy.png and a checkpoint written after every round: running the same command
again resumes from it (saying so on stderr), an interrupted run where it stopped, a finished
one without training. A checkpoint of other settings is refused; --overwrite deletes the
checkpoint and results in DIR and starts afresh. Results without a checkpoint are refused unless
--overwrite.

Example:

  trustlab federated simulate --out uefl_run --n-silos 5 --rounds 8 --seed 0
"""

FLOWER_APP_HELP = """Write the Flower App project for UEFL and print how to launch it.

A folder that already holds a project (pyproject.toml) is refused unless --overwrite.

The project (a pyproject.toml) names trustlab.federated.flower:server_app and :client_app and
holds the run config; start one SuperLink and one SuperNode per silo (node config
"partition-id=<i> num-partitions=<n>"), then `flwr run DIR <connection> --stream`. See
docs/federated-uefl.md for TLS and SuperNode authentication across machines.
"""


# The protocol's schedule, shared by simulate and flower-app. The library checks every value and
# its errors name these options.
ShiftOption = Annotated[str, typer.Option("--shift", help="rotation, mixed or none.")]
DataOption = Annotated[
    str,
    typer.Option("--data", help="digits (8x8, seconds) or mnist (5,000 images, 14x14, minutes)."),
]
RoundsOption = Annotated[int, typer.Option("--rounds", help="Rounds of iteration 1 (R).")]
RoundsPlusOption = Annotated[
    int, typer.Option("--rounds-plus", help="Rounds per extension iteration (R+).")
]
MaxIterationsOption = Annotated[
    int, typer.Option("--max-iterations", help="Iteration cap, the first included.")
]
SeedOption = Annotated[int, typer.Option("--seed", help="Random seed.")]

# The sanity bound of simulate's plan, in silo-epochs (rounds x silos x local epochs x methods):
# about 0.05 s each on digits, so hours; the paper's MNIST setting is 600.
SIMULATE_LIMIT = 1e5
_NAMES = {"uefl": "UEFL", "fedavg": "FedAvg", "vq": "VQ (one codebook)"}
RESULT_FILES = ("result.json", "accuracy.png", "entropy.png")


@app.command("simulate", help=SIMULATE_HELP)
def simulate_command(
    out: Annotated[Path, typer.Option("--out", help="Directory for results and checkpoint.")],
    n_silos: Annotated[int, typer.Option("--n-silos", help="Number of silos (>= 2).")] = 5,
    rounds: RoundsOption = 8,
    rounds_plus: RoundsPlusOption = 3,
    max_iterations: MaxIterationsOption = 3,
    local_epochs: Annotated[
        int, typer.Option("--local-epochs", help="Local epochs per silo and round.")
    ] = 2,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="thd: uncertain when H > (1 + thd) * mean H (default: the paper's, 0.3 for "
            "the unbalanced 5-silo rotation setting, 0.1 otherwise).",
        ),
    ] = None,
    shift: ShiftOption = "rotation",
    data: DataOption = "digits",
    sharing: Annotated[
        str, typer.Option("--codebooks", help="local (authors' code) or shared (paper).")
    ] = "local",
    codewords: Annotated[
        str,
        typer.Option(
            "--codewords",
            help="What trains the codewords: codebook_loss (the paper's rule; default) or "
            "task (the classification loss too).",
        ),
    ] = "codebook_loss",
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline",
            help="fedavg (default) and/or vq, repeatable: --baseline vq alone leaves FedAvg out.",
        ),
    ] = None,
    seed: SeedOption = 0,
    overwrite: OverwriteOption = False,
    yes: YesOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    from trustlab.federated import simulate_uefl

    # Without --threshold the library picks the paper's thd for the silos asked for.
    settings = {} if threshold is None else {"threshold_factor": threshold}
    methods = ["uefl", *dict.fromkeys(baseline or ["fedavg"])]
    check_output_dir(out, "--out")  # a file as --out: one line before any work
    if not overwrite and not (out / "checkpoint.json").exists():
        refuse_existing(out, overwrite, RESULT_FILES, "a simulation without its checkpoint")
    extension = rounds_plus * (max_iterations - 1)
    others = " and ".join(_NAMES.get(m, m) for m in methods[1:])
    plan = (
        f"UEFL: {counted(rounds, 'round')} + up to {counted(extension, 'extension round')} on "
        f"{n_silos} {data} silos ({shift} shift), {counted(local_epochs, 'local epoch')} per "
        f"round; then {others} for as many rounds"
    )
    work = float(rounds + extension) * n_silos * local_epochs * len(methods)
    if work > SIMULATE_LIMIT and not yes:  # refused before anything (a checkpoint) is touched
        announce(plan, work=work, limit=SIMULATE_LIMIT, yes=yes, unit=" silo-epochs")
    with progress() as bar:
        tasks = [bar.add_task(f"{_NAMES.get(m, m)} rounds", total=None) for m in methods]
        started: list[bool] = []

        def report(done: int, total: int) -> None:
            if not started:  # every input, the checkpoint included, is checked: say what comes
                started.append(True)
                announce(plan, work=work, limit=SIMULATE_LIMIT, yes=yes, unit=" silo-epochs")
                if overwrite:  # the library deleted the old checkpoint; its results go too
                    remove_stale(out, RESULT_FILES)
                if done:
                    tell(f"trustlab: resuming from {out / 'checkpoint.json'}: {done} of up to "
                         f"{total} rounds done", as_json=True)  # fmt: skip
            per_method = total // len(methods)  # methods run one after another
            for k, task in enumerate(tasks):
                done_here = min(max(done - k * per_method, 0), per_method)
                bar.update(task, completed=done_here, total=per_method)

        names = {"baselines": "--baseline", "checkpoint": "--out"}
        hints = {"checkpoint": "--overwrite deletes it and starts afresh"}
        with options_named(names, hints):
            result = simulate_uefl(
                n_silos=n_silos,
                shift=shift,
                data=data,
                baselines=tuple(methods[1:]),
                checkpoint=out,
                fresh=overwrite,
                progress=report,
                random_state=seed,
                rounds=rounds,
                rounds_plus=rounds_plus,
                max_iterations=max_iterations,
                local_epochs=local_epochs,
                codebook_sharing=sharing,
                codeword_gradient=codewords,
                **settings,
            )
    save(result, out, as_json)
    emit(result, as_json)


@app.command("flower-app", help=FLOWER_APP_HELP)
def flower_app_command(
    out: Annotated[Path, typer.Option("--out", help="Directory for the Flower App project.")],
    n_silos: Annotated[int, typer.Option("--n-silos", help="Number of silos / SuperNodes.")] = 3,
    rounds: RoundsOption = 8,
    rounds_plus: RoundsPlusOption = 3,
    max_iterations: MaxIterationsOption = 3,
    shift: ShiftOption = "rotation",
    data: DataOption = "digits",
    result_dir: Annotated[
        Path | None,
        typer.Option(
            "--result-dir", help="Where the ServerApp writes its result (SuperLink host)."
        ),
    ] = None,
    port: Annotated[int, typer.Option("--port", help="SuperLink port in the printed commands.")] = (
        9093
    ),
    n_features: Annotated[
        int | None,
        typer.Option(
            "--n-features",
            help="Features per row of the model (default: the --data set's, 64 or 196); set "
            "it for nodes with their own data-path files.",
        ),
    ] = None,
    n_classes: Annotated[
        int,
        typer.Option("--n-classes", help="Classes of the model (labels 0..K-1; at most 10,000)."),
    ] = 10,
    num_features: Annotated[
        int | None, typer.Option("--num-features", hidden=True, help="Deprecated: --n-features.")
    ] = None,
    num_classes: Annotated[
        int | None, typer.Option("--num-classes", hidden=True, help="Deprecated: --n-classes.")
    ] = None,
    encoder: Annotated[
        str,
        typer.Option(
            "--encoder",
            help="cnn (square images, s * s features with s even) or mlp (any flat features, "
            "e.g. data-path nodes with other rows).",
        ),
    ] = "cnn",
    seed: SeedOption = 0,
    overwrite: OverwriteOption = False,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)] = False,
) -> None:
    from trustlab.federated import UEFLConfig, paper_threshold_factor, write_flower_app

    refuse_existing(out, overwrite, ("pyproject.toml",), "a Flower App")
    # The project directory is the output: write_flower_app writes it (no result.json beside
    # the pyproject.toml, which flwr would bundle with the app).
    config = UEFLConfig(
        rounds=rounds, rounds_plus=rounds_plus, max_iterations=max_iterations, random_state=seed,
        threshold_factor=paper_threshold_factor(n_silos, shift), encoder=encoder,
    )  # fmt: skip
    with options_named(_CONFIG_OPTIONS):  # "config.random_state: ..." -> "--seed: ..."
        app = write_flower_app(
            out, config, n_silos=n_silos, shift=shift, data=data, result_dir=result_dir,
            port=port,
            n_features=renamed_option(n_features, num_features, "--n-features", "--num-features"),
            n_classes=renamed_option(n_classes, num_classes, "--n-classes", "--num-classes"),
        )  # fmt: skip
    emit(app, as_json)


#: The run-config entries that write_flower_app checks, as the options that set them.
_CONFIG_OPTIONS = {
    "config.random_state": "--seed",
    "config.rounds": "--rounds",
    "config.rounds_plus": "--rounds-plus",
    "config.max_iterations": "--max-iterations",
}

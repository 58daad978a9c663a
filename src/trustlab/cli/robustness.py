"""``trustlab robustness``: train and certify smoothed classifiers against harmful mistakes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import (
    JSON_OPTION_HELP,
    EncodingOption,
    YesOption,
    announce,
    emit,
    progress,
    save,
    tell,
)
from trustlab.cli._robustness_inputs import (
    digits_split,
    parse_harmful,
    read_cost_matrix,
    read_data,
)
from trustlab.cli._runs import (
    OverwriteOption,
    amount,
    counted,
    options_named,
    refuse_existing,
    remove_stale,
)
from trustlab.errors import InputError

__all__ = ["app", "read_data", "read_cost_matrix", "parse_harmful", "FORMATS"]

app = typer.Typer(
    no_args_is_help=True,
    help="Certified robustness by randomized smoothing, cost-sensitive: certify that no small "
    "perturbation can cause a harmful mistake.",
)

FORMATS = """\
Data (--data):

  digits     scikit-learn's 8x8 digits, pixels scaled to [0, 1]; a fixed
             stratified split: "train" (1,257 images) for train, "test"
             (540) for certify (change it with --split)
  .csv       one column per feature and a label column (--label, default
             "label") holding class indices 0..K-1 (also .tsv, .parquet); a
             first column with an empty header (pandas' index) is skipped
  .npz       arrays "X" (n, features) and "y" (n,) of class indices

Costs (--cost-matrix costs.csv): a K x K table of non-negative numbers, row =
true class, column = predicted class, zeros on the diagonal; entry (y, j) > 0
means reading a true y as j is harmful (real values weight the harm). Labels
are optional and are read from the shape: K+1 rows of K has a header row,
K rows of K+1 a first (index) column, and a square table has both when its
top-left cell is empty or text (as pandas' to_csv writes it), none when it is
a number. Labels are the class indices 0..K-1, each once, in any order; the
costs are placed by them. A table of numbers with a 0 in the corner whose
first row and column are both 0..K-1 is read by the class count (the model's
in certify, the labels' in train): costs when it has that many rows, labels
when one more; otherwise it is refused as ambiguous.
Or name the harmful pairs: --harmful 3:8 (repeatable; 3:5,8 for several
targets). Without either, train treats every mistake as harmful (standard
robustness), and certify uses what the model was trained for.

Models (--model DIR): the folder `trustlab robustness train --out DIR` writes:
a torch state dict (model.pt) and its description (model.json: the
architecture, mlp or cnn, and what it was trained for: sigma, the cost matrix
and harmful pairs, the held-out accuracy); loaded with weights_only=True, so no
code in the file is run. --model DIR/model.pt names the same model.
"""

# Sanity bounds of the up-front plans (beyond them a command asks for --yes): about a day of a
# small model on one CPU core, minutes to hours on a GPU or a Dask cluster.
TRAIN_LIMIT = 1e10  # noisy training examples: epochs x examples x noisy copies
CERTIFY_LIMIT = 1e10  # noise samples: points x (n0 + n)
# Noisy copies per input in training (train_smoothed's default gauss_num, the paper's).
GAUSS_NUM = 16
# The files of a model folder and of a certification in --out.
MODEL_FILES = ("model.pt", "model.json")
CERTIFY_FILES = ("result.json", "certificates.csv", "certified_accuracy.png")
CHECKPOINT = "checkpoint.jsonl"


DataOption = Annotated[
    str, typer.Option("--data", help="'digits', or a .csv/.tsv/.parquet/.npz file.")
]
LabelOption = Annotated[str, typer.Option("--label", help="Label column of a CSV/Parquet file.")]
CostOption = Annotated[
    Path | None, typer.Option("--cost-matrix", help="A K x K CSV of costs (see above).")
]
HarmfulOption = Annotated[
    list[str] | None,
    typer.Option("--harmful", help="Harmful pairs SEED:TARGET[,TARGET...] (repeatable)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]


TRAIN_HELP = """Train a small base classifier for smoothing.

The model folder (--out, model.pt and model.json) records what the model was trained for:
sigma, the cost matrix (or harmful pairs) and the held-out accuracy; certify uses them when its
--sigma, --cost-matrix and --harmful are omitted. An existing model in --out is refused unless
--overwrite.

Held-out accuracy (reported in the summary and model.json): with --data digits --split train,
on the digits test split (540 images, which certify uses by default); otherwise on --holdout of
the data (default 0.2, stratified, seeded by --seed below 2**32), which is then not trained on.

"""


SplitOption = Annotated[
    str | None,
    typer.Option(
        "--split", help="Digits split: train, test, all (default: train to train, test to certify)."
    ),
]


@app.command("train", help=TRAIN_HELP + FORMATS)
def train_command(
    data: DataOption = "digits",
    out: Annotated[
        Path, typer.Option("--out", help="The model folder: model.pt and model.json.")
    ] = Path("model"),
    split: SplitOption = None,
    label: LabelOption = "label",
    cost_matrix: CostOption = None,
    harmful: HarmfulOption = None,
    method: Annotated[str, typer.Option("--method", help="margin-cs or gaussian.")] = "margin-cs",
    arch: Annotated[str, typer.Option("--arch", help="mlp or cnn.")] = "mlp",
    hidden: Annotated[int, typer.Option("--hidden", help="Hidden units.")] = 128,
    sigma: Annotated[float, typer.Option("--sigma", help="Noise level.")] = 0.25,
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Training epochs.")] = 30,
    learning_rate: Annotated[
        float, typer.Option("--learning-rate", help="SGD learning rate.")
    ] = 0.1,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Inputs per step.")] = 64,
    holdout: Annotated[
        float | None,
        typer.Option(
            "--holdout",
            help="Share of the data held out for the accuracy report, never trained on (0: "
            "none; default: the digits test split for --split train, else 0.2).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    from trustlab._checks import check_choice, check_class_indices
    from trustlab.robustness import (
        ARCHITECTURES,
        METHODS,
        digits_model,
        save_base_model,
        train_smoothed,
    )

    check_choice(method, "--method", METHODS)  # before seconds of reading (review 58)
    check_choice(arch, "--arch", ARCHITECTURES)
    split = digits_split(data, split, "train")
    refuse_existing(out, overwrite, MODEL_FILES, "a model")
    X, y = read_data(data, label, split, encoding)
    # K: the cost matrix's size when given, else the labels' (at least 2).
    labels_count = max(int(check_class_indices(y, "y").max()) + 1, 2)
    if cost_matrix is not None and not harmful:
        # the labels' count only settles a table whose first row and column could be labels
        costs = read_cost_matrix(cost_matrix, encoding, n_classes=labels_count)
        n_classes = len(costs)
        if n_classes < labels_count:  # the table is short of classes, not the labels wrong
            raise InputError(
                f"--cost-matrix: expected a K x K table with K >= {labels_count} (the labels "
                f"go up to class {labels_count - 1}), got a {n_classes} x {n_classes} "
                f"table in {cost_matrix.name}",
                argument="--cost-matrix",
            )
    else:
        n_classes = labels_count
        costs = _costs(cost_matrix, harmful, n_classes, encoding)
    X, y, held_out, source = _held_out(X, y, data, split, holdout, seed)
    model = digits_model(
        arch, n_features=X.shape[1], n_classes=n_classes, hidden=hidden, random_state=seed
    )
    plan = (
        f"training an {arch} ({counted(hidden, 'hidden unit')}) with {method} at sigma "
        f"{sigma:g} on {counted(len(X), 'example')}: {counted(max_epochs, 'epoch')} x "
        f"{GAUSS_NUM} noisy copies, against {_costs_text(costs)}"
    )
    with progress() as bar:
        task = bar.add_task(f"training, {counted(max_epochs, 'epoch')}", total=max_epochs)

        def report(done: int, total: int) -> None:
            if done == 0:  # every input is checked: say what comes
                work = float(max_epochs) * len(X) * GAUSS_NUM
                announce(plan, work=work, limit=TRAIN_LIMIT, yes=yes, unit=" noisy examples")
            bar.update(task, completed=done, total=total)

        result = train_smoothed(
            model, X, y, costs, method, sigma=sigma, max_epochs=max_epochs,
            learning_rate=learning_rate, batch_size=batch_size, random_state=seed,
            gauss_num=GAUSS_NUM, progress=report, validation_data=held_out,
            validation_source=source,
        )  # fmt: skip
    folder = save_base_model(
        model, out, method=method, sigma=sigma, data=data,
        cost_matrix=None if costs is None else costs.tolist(),
        harmful=None if costs is None else _harmful_pairs(costs),
        training=result.to_dict(),
    )  # fmt: skip
    emit(result, as_json)
    tell(f"wrote the model (model.pt, model.json) to {folder}", as_json)


def _held_out(X, y, data: str, split: str, holdout: float | None, seed: int):
    """(training X, y, held-out (X, y) or None, what the held-out data are)."""
    import numpy as np

    if holdout is None and data == "digits" and split == "train":
        from trustlab.robustness import load_digits_split

        return X, y, load_digits_split("test"), "the digits test split"
    share = 0.2 if holdout is None else holdout
    if not 0 <= share <= 0.5:
        raise InputError.bad("--holdout", "a share of the data in [0, 0.5]", holdout)
    n_out = int(round(share * len(X)))
    if n_out == 0:
        return X, y, None, ""
    if len(X) - n_out < 2:
        raise InputError.bad("--holdout", f"a share that leaves rows to train on ({len(X)})", share)
    if seed > 2**32 - 1:  # scikit-learn's split takes 32-bit seeds (else a raw error, exit 1)
        raise InputError.bad("--seed", "a seed in [0, 2**32-1] for the --holdout split", seed)
    from sklearn.model_selection import train_test_split

    _, counts = np.unique(y, return_counts=True)
    stratify = y if counts.min() >= 2 and n_out >= len(counts) else None
    X_train, X_out, y_train, y_out = train_test_split(
        X, y, test_size=n_out, stratify=stratify, random_state=seed
    )
    return X_train, y_train, (X_out, y_out), f"{share:.0%} of the data held out (--holdout)"


def _harmful_pairs(costs) -> list[list[int]]:
    """The ``[true, predicted]`` pairs a cost matrix marks harmful."""
    import numpy as np

    return [[int(i), int(j)] for i, j in zip(*np.nonzero(costs > 0), strict=True)]


def _costs_text(costs) -> str:
    """What a cost matrix (or None) counts as harmful, in a few words."""
    if costs is None:
        return "every mistake (standard robustness)"
    pairs = _harmful_pairs(costs)
    size = len(costs)
    if len(pairs) == size * (size - 1) and len(set(costs[costs > 0].tolist())) == 1:
        return "every mistake (standard robustness)"
    if not pairs:
        return "no harmful mistake"
    listed = ", ".join(f"{i}->{j}" for i, j in pairs[:6])
    more = f" and {len(pairs) - 6} more" if len(pairs) > 6 else ""
    return f"harmful {listed}{more}"


CERTIFY_HELP = """Certify a model's smoothed predictions on a dataset.

Without --sigma, --cost-matrix and --harmful, certify uses what the model was trained for (its
model.json; said on stderr). Options that contradict it are used as given, with a warning on
stderr (certifying a model at another sigma or against other harmful pairs is a fair question,
but rarely the intended one).

--out DIR: the run records every finished point in DIR/checkpoint.jsonl, and the same command
again resumes from it (saying so on stderr): only the missing points are sampled, and --alpha
and the costs may change, as they act after sampling. A checkpoint of another model, data,
sigma, --n0, --n or --seed is refused; --overwrite deletes it (and the results in DIR) and starts
afresh. Results without a checkpoint are refused unless --overwrite.

"""


@app.command("certify", help=CERTIFY_HELP + FORMATS)
def certify_command(
    model: Annotated[Path, typer.Option("--model", help="The model folder train wrote.")],
    data: DataOption = "digits",
    split: SplitOption = None,
    label: LabelOption = "label",
    cost_matrix: CostOption = None,
    harmful: HarmfulOption = None,
    sigma: Annotated[
        float | None, typer.Option("--sigma", help="Noise level (default: the model's).")
    ] = None,
    n0: Annotated[int, typer.Option("--n0", help="Selection samples per point.")] = 100,
    n: Annotated[int, typer.Option("--n", help="Estimation samples per point.")] = 10_000,
    alpha: Annotated[float, typer.Option("--alpha", help="Failure probability.")] = 0.001,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Certify only the first LIMIT points.")
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Model batch size.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    n_jobs: Annotated[int, typer.Option("--n-jobs", help="Parallel workers (-1: all).")] = 1,
    dask_scheduler: Annotated[
        str | None, typer.Option("--dask-scheduler", help="Run on this Dask scheduler.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write result.json, certificates.csv and certified_accuracy.png here; the "
            "run checkpoints to checkpoint.jsonl there and resumes from it.",
        ),
    ] = None,
    encoding: EncodingOption = None,
    overwrite: OverwriteOption = False,
    yes: YesOption = False,
    as_json: JsonOption = False,
) -> None:
    from trustlab.robustness import SmoothedClassifier, certify_dataset, load_base_model

    split = digits_split(data, split, "test")
    network = load_base_model(model)
    n_classes = int(network.trustlab_description["n_classes"])
    description = _trained_for(network.trustlab_description, n_classes, model)
    X, y = read_data(data, label, split, encoding)
    if limit is not None:
        if limit < 1:
            raise InputError.bad("--limit", "a positive number of points", limit)
        X, y = X[:limit], y[:limit]
    if X.shape[1] != description["n_features"]:
        raise InputError.bad(
            "--data", f"{description['n_features']} features (the model's)", X.shape[1]
        )
    sigma, sigma_note = _sigma(sigma, description)
    costs, costs_note = _certify_costs(cost_matrix, harmful, n_classes, description, encoding)
    smooth = SmoothedClassifier(network, sigma, n_classes, batch_size=batch_size)
    checkpoint = None if out is None else out / CHECKPOINT
    if checkpoint is not None and checkpoint.exists() and not checkpoint.is_file():
        # not --overwrite's to delete: a folder there was a raw IsADirectoryError, exit 1
        raise InputError.bad("--out", f"a folder whose {CHECKPOINT} is a file", str(checkpoint))
    if checkpoint is not None and not overwrite and not checkpoint.exists():
        refuse_existing(out, overwrite, CERTIFY_FILES, "a certification without its checkpoint")
    plan = (
        f"certifying {counted(len(X), 'point')} x {counted(n0 + n, 'sample')} ({amount(n0)} + "
        f"{amount(n)}) at sigma {sigma:g}{sigma_note}, against {_costs_text(costs)}{costs_note}"
    )
    warnings = _contradictions(sigma, costs, cost_matrix, harmful, description)
    work = float(len(X)) * (n0 + n)
    if overwrite and work > CERTIFY_LIMIT and not yes:
        # refused now: certify_dataset(fresh=True) deletes the old run before the plan is said
        announce(plan, work=work, limit=CERTIFY_LIMIT, yes=yes, unit=" samples")
    with progress() as bar:
        task = bar.add_task(f"certifying {counted(len(X), 'point')}", total=len(X))
        started: list[bool] = []

        def report(done: int, total: int) -> None:
            if not started:  # every input, the checkpoint included, is checked: say what comes
                started.append(True)
                if out is not None and overwrite:  # the old checkpoint went with fresh=True
                    remove_stale(out, CERTIFY_FILES)
                announce(plan, work=work, limit=CERTIFY_LIMIT, yes=yes, unit=" samples")
                for warning in warnings:
                    tell(f"trustlab: warning: {warning}", as_json=True)
                if done:
                    tell(f"trustlab: resuming from {checkpoint}: {done:,} of {total:,} points "
                         "already sampled", as_json=True)  # fmt: skip
            bar.update(task, completed=done)

        hint = "--overwrite deletes it and starts afresh"
        with options_named({"checkpoint": "--out"}, {"checkpoint": hint}):
            result = certify_dataset(
                smooth, X, y, n0=n0, n=n, alpha=alpha, cost_matrix=costs, random_state=seed,
                checkpoint=checkpoint, n_jobs=n_jobs, dask_scheduler=dask_scheduler,
                progress=report, fresh=overwrite,
            )  # fmt: skip
    emit(result, as_json)
    save(result, out, as_json)


def _trained_for(description: dict, n_classes: int, model: Path) -> dict:
    """The model's description with its sigma and cost matrix checked: a damaged model.json
    (sigma "abc", a ragged cost matrix) was a raw ValueError, exit 1. Errors name --model and
    the file, not --sigma or --cost-matrix, which were not given. A stored sigma of 0 (a model
    saved as trained without noise) is kept: certifying it needs --sigma."""
    from trustlab._checks import check_non_negative
    from trustlab.robustness import check_cost_matrix

    checked = dict(description)
    try:
        if checked.get("sigma") is not None:
            checked["sigma"] = check_non_negative(checked["sigma"], "sigma")
        if checked.get("cost_matrix") is not None:
            checked["cost_matrix"] = check_cost_matrix(checked["cost_matrix"], n_classes)
    except InputError as exc:
        raise InputError(
            f"--model: {exc} (in the model.json of {model}, what the model was trained for)",
            argument="--model",
        ) from None
    return checked


def _sigma(sigma: float | None, description: dict) -> tuple[float, str]:
    """The noise level to certify at, and a note when it is the model's."""
    stored = description.get("sigma")
    if sigma is not None:
        return sigma, ""
    if stored is None:
        raise InputError.bad("--sigma", "a noise level (the model file names none)", None)
    if stored == 0:
        raise InputError.bad("--sigma", "a noise level (the model was trained without noise)", None)
    return float(stored), " (the model's)"


def _certify_costs(cost_matrix, harmful, n_classes: int, description: dict, encoding):
    """The cost matrix to certify against (--cost-matrix/--harmful, else the model's) and a note
    saying where it came from."""
    import numpy as np

    given = _costs(cost_matrix, harmful, n_classes, encoding)
    if cost_matrix is not None or harmful:
        return given, ""
    if "cost_matrix" not in description:  # a model saved before costs were recorded
        return None, " (the model records no costs; --harmful or --cost-matrix names them)"
    stored = description["cost_matrix"]
    costs = None if stored is None else np.asarray(stored, dtype=np.float64)
    return costs, " (what the model was trained for)"


def _contradictions(sigma, costs, cost_matrix, harmful, description: dict) -> list[str]:
    """Warnings where the options differ from what the model was trained for."""
    import numpy as np

    out = []
    stored = description.get("sigma")
    if stored is not None and not np.isclose(sigma, float(stored), rtol=1e-9, atol=0):
        out.append(f"--sigma {sigma:g} differs from the {float(stored):g} the model was "
                   f"trained at; certifying at {sigma:g} as asked")  # fmt: skip
    if (cost_matrix is not None or harmful) and "cost_matrix" in description:
        trained = description["cost_matrix"]
        trained = None if trained is None else np.asarray(trained, dtype=np.float64)
        same = (costs is None and trained is None) or (
            costs is not None and trained is not None and costs.shape == trained.shape
            and np.array_equal(costs > 0, trained > 0) and np.allclose(costs, trained)
        )  # fmt: skip
        if not same:
            option = "--cost-matrix" if cost_matrix is not None else "--harmful"
            out.append(f"{option} ({_costs_text(costs)}) differs from what the model was "
                       f"trained for ({_costs_text(trained)}); certifying as asked")  # fmt: skip
    return out


def _costs(cost_matrix: Path | None, harmful: list[str] | None, n_classes: int, encoding=None):
    """The cost matrix of --cost-matrix or of --harmful, or None (every mistake harmful).

    The library checks it against the model's classes (its errors name ``--cost-matrix``).
    """
    if cost_matrix is not None and harmful:
        raise InputError.bad("--harmful", "either --cost-matrix or --harmful, not both", harmful)
    if harmful:
        return parse_harmful(harmful, n_classes)
    return None if cost_matrix is None else read_cost_matrix(cost_matrix, encoding, n_classes)

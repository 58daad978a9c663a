"""``trustlab robustness``: train and certify smoothed classifiers against harmful mistakes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trustlab.cli._common import JSON_OPTION_HELP, emit, progress, read_table, save, tell
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
             "label") holding class indices 0..K-1 (also .tsv, .parquet)
  .npz       arrays "X" (n, features) and "y" (n,) of class indices

Costs (--cost-matrix costs.csv): a K x K table of non-negative numbers, row =
true class, column = predicted class, zeros on the diagonal; entry (y, j) > 0
means reading a true y as j is harmful (real values weight the harm). No
header, or a header row (and a first column) of the class indices 0..K-1.
Or name the harmful pairs: --harmful 3:8 (repeatable; 3:5,8 for several
targets). Without either, every mistake is harmful (standard robustness).

Models (--model DIR): the folder `trustlab robustness train --out DIR` writes:
a torch state dict (model.pt) and its architecture (model.json: mlp or cnn, see
trustlab.robustness.digits_model); loaded with weights_only=True, so no code in
the file is run.
"""

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


@app.command("train", help="Train a small base classifier for smoothing.\n\n" + FORMATS)
def train_command(
    data: DataOption = "digits",
    out: Annotated[
        Path, typer.Option("--out", help="The model folder: model.pt and model.json.")
    ] = Path("model"),
    split: Annotated[
        str, typer.Option("--split", help="Digits split: train, test, all.")
    ] = "train",
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
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_json: JsonOption = False,
) -> None:
    from trustlab._checks import check_class_indices
    from trustlab.robustness import digits_model, save_base_model, train_smoothed

    X, y = read_data(data, label, split)
    # K: the cost matrix's size when given, else the labels' (at least 2).
    if cost_matrix is not None and not harmful:
        costs = read_cost_matrix(cost_matrix)
        num_classes = len(costs)
    else:
        num_classes = max(int(check_class_indices(y, "y").max()) + 1, 2)
        costs = _costs(cost_matrix, harmful, num_classes)
    model = digits_model(
        arch, num_features=X.shape[1], num_classes=num_classes, hidden=hidden, random_state=seed
    )
    result = train_smoothed(
        model, X, y, costs, method, sigma=sigma, max_epochs=max_epochs,
        learning_rate=learning_rate, batch_size=batch_size, random_state=seed,
        progress=not as_json,
    )  # fmt: skip
    folder = save_base_model(
        model, out, method=method, sigma=sigma, data=data, training=result.to_dict()
    )
    emit(result, as_json)
    tell(f"wrote the model (model.pt, model.json) to {folder}", as_json)


@app.command("certify", help="Certify a model's smoothed predictions on a dataset.\n\n" + FORMATS)
def certify_command(
    model: Annotated[Path, typer.Option("--model", help="The model folder train wrote.")],
    data: DataOption = "digits",
    split: Annotated[str, typer.Option("--split", help="Digits split: train, test, all.")] = "test",
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
    as_json: JsonOption = False,
) -> None:
    from trustlab.robustness import SmoothedClassifier, certify_dataset, load_base_model

    network = load_base_model(model)
    description = network.trustlab_description
    num_classes = int(description["num_classes"])
    X, y = read_data(data, label, split)
    if limit is not None:
        if limit < 1:
            raise InputError.bad("--limit", "a positive number of points", limit)
        X, y = X[:limit], y[:limit]
    if X.shape[1] != description["num_features"]:
        raise InputError.bad(
            "--data", f"{description['num_features']} features (the model's)", X.shape[1]
        )
    sigma = description.get("sigma") if sigma is None else sigma
    if sigma is None:
        raise InputError.bad("--sigma", "a noise level (the model file names none)", None)
    costs = _costs(cost_matrix, harmful, num_classes)
    smooth = SmoothedClassifier(network, sigma, num_classes, batch_size=batch_size)
    checkpoint = None if out is None else out / "checkpoint.jsonl"
    with progress(enabled=not as_json) as bar:
        task = bar.add_task(f"certifying {len(X)} points", total=len(X))
        result = certify_dataset(
            smooth, X, y, n0=n0, n=n, alpha=alpha, cost_matrix=costs, random_state=seed,
            checkpoint=checkpoint, n_jobs=n_jobs, dask_scheduler=dask_scheduler,
            progress=lambda done, total: bar.update(task, completed=done),
        )  # fmt: skip
    emit(result, as_json)
    save(result, out, as_json)


def read_data(data: str, label: str = "label", split: str = "train"):
    """Features ``(n, d)`` and labels from 'digits', a table or an .npz file.

    Only the file formats are checked here; the values (numbers, class indices, lengths) are
    checked by the library functions they are passed to.
    """
    import numpy as np

    if data == "digits":
        from trustlab.robustness import load_digits_split

        return load_digits_split(split)
    path = Path(data)
    if not path.is_file():
        raise InputError.bad("--data", "'digits' or an existing .csv/.parquet/.npz file", data)
    if path.suffix.lower() == ".npz":
        try:
            with np.load(path, allow_pickle=False) as archive:
                if "X" not in archive.files or "y" not in archive.files:
                    raise InputError.bad("--data", 'an .npz with arrays "X" and "y"', archive.files)
                X, y = archive["X"], archive["y"]
        except (OSError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"--data: could not read {path}: {exc}", argument="--data") from exc
        if X.ndim != 2:
            raise InputError.bad("--data", 'an .npz array "X" of shape (n, features)', X)
    else:
        table = read_table(path, "--data")
        if label not in table.columns:
            raise InputError.bad("--label", f"a column of {path.name}", label)
        y = table[label].to_numpy()
        X = table.drop(columns=[label]).to_numpy()
    return X, y


def read_cost_matrix(path: Path):
    """A K x K cost matrix from a CSV: no header, or a header row (and index column) of 0..K-1."""
    import numpy as np
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError.bad("--cost-matrix", "an existing CSV file", str(path))
    try:
        table = pd.read_csv(path, header=None, dtype=str, skipinitialspace=True)
    except Exception as exc:  # parser errors become one clear line
        raise InputError(
            f"--cost-matrix: could not read {path}: {exc}", argument="--cost-matrix"
        ) from exc
    values = table.to_numpy()
    if values.shape[0] == values.shape[1] + 1:  # a header row of class indices
        values = values[1:]
    if values.shape[1] == values.shape[0] + 1:  # and an index column
        values = values[:, 1:]
    try:
        costs = values.astype(np.float64)
    except ValueError:
        raise InputError.bad(
            "--cost-matrix", f"a square table of numbers in {path.name}", values.tolist()
        ) from None
    if costs.ndim != 2 or costs.shape[0] != costs.shape[1] or np.isnan(costs).any():
        raise InputError.bad("--cost-matrix", f"a full K x K table in {path.name}", costs)
    return costs


def parse_harmful(values: list[str], num_classes: int):
    """Harmful pairs from "SEED:TARGET[,TARGET...]" strings, as a binary cost matrix.

    The library checks the class indices (its errors name ``harmful``: ``--harmful`` here).
    """
    from trustlab.robustness import make_cost_matrix

    pairs = []
    for value in values:
        seed, _, targets = value.partition(":")
        try:
            pairs += [(int(seed), int(t)) for t in targets.split(",")]
        except ValueError:
            raise InputError.bad(
                "--harmful", "SEED:TARGET[,TARGET...] with class indices", value
            ) from None
    return make_cost_matrix(num_classes, pairs)


def _costs(cost_matrix: Path | None, harmful: list[str] | None, num_classes: int):
    """The cost matrix of --cost-matrix or of --harmful, or None (every mistake harmful).

    The library checks it against the model's classes (its errors name ``--cost-matrix``).
    """
    if cost_matrix is not None and harmful:
        raise InputError.bad("--harmful", "either --cost-matrix or --harmful, not both", harmful)
    if harmful:
        return parse_harmful(harmful, num_classes)
    return None if cost_matrix is None else read_cost_matrix(cost_matrix)

"""``trustlab explain regions``: train, predict with and evaluate region-sparse classifiers (P2P).

``train --data NAME --out DIR`` generates a BAM-lite set, holds out ``--test-size`` of it
(stratified) and trains a :class:`~trustlab.explain.regions.RegionSparseClassifier` (or, with
``--blackbox`` or ``--pixels Q``, a :class:`~trustlab.explain.regions.BlackBoxClassifier` baseline)
on the rest. A P2P model's training state is saved after every epoch into ``DIR/_state``, so a rerun
of the same command after a crash or Ctrl-C continues where it stopped (a state of other data or
settings is refused; ``--overwrite`` discards it); a baseline's training starts again. DIR ends with ``model/`` (the saved
model), ``training.json`` (data, settings, history, held-out accuracy) and, for P2P,
``training.png``.

``predict --model DIR|--checkpoint NAME [--images FILE.npy | --data NAME --n N --seed S]`` predicts
from the regions each image's selection keeps and writes ``predictions.json``, one overlay PNG per
image (``overlays/overlay_<i>.png``: the unselected area dimmed) and ``regions.png``.

``evaluate [--checkpoint NAME ...] [--model DIR ...] --n N --seed S --out DIR`` runs
:func:`~trustlab.explain.regions.evaluate_regions` on fresh labelled images with object masks (the
checkpoints' test generator, or ``--data``) and writes ``evaluation.json``,
``regions_evaluation.png`` and the page ``regions.html`` (its numbers in ``regions.json``).

Why this module is long: three commands with their options, checks and one-line errors; the
helpers they share (data, model folders and records) would otherwise be imported back.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from trustlab._results import json_text, write_atomic, write_png
from trustlab.cli._common import JSON_OPTION_HELP, emit, npy_reason, progress, tell
from trustlab.cli._resume import fit_resuming, resume_note
from trustlab.cli._runs import (
    OverwriteOption,
    folder_labels,
    options_named,
    refuse_existing,
    refuse_repeats,
    remove_stale,
    unique_key,
)
from trustlab.errors import InputError

__all__ = ["app", "DATA_SOURCES"]

app = typer.Typer(
    no_args_is_help=True,
    help="Region-sparse image classifiers (P2P): train, predict with regions, evaluate.",
)

#: --data name -> arguments of :func:`~trustlab.explain.regions.bam_lite`.
DATA_SOURCES: dict[str, dict[str, str]] = {
    "bam-lite-shapes": {"label": "object", "object_source": "shapes"},
    "bam-lite-digits": {"label": "object", "object_source": "digits"},
    "bam-lite-scene": {"label": "scene", "object_source": "shapes"},
}
DEFAULT_DATA = "bam-lite-shapes"

DataOption = Annotated[
    str | None,
    typer.Option(
        "--data",
        help="bam-lite-shapes (label: the pasted shape), bam-lite-digits (the pasted digit) or "
        "bam-lite-scene (the scene; the shape is a distractor).",
    ),
]
SeedOption = Annotated[
    int,
    typer.Option("--seed", help="Seed of the generated images (3: a seed no checkpoint saw)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]


@app.callback()
def _group() -> None:
    """Region-sparse image classifiers (P2P): train, predict with regions, evaluate."""


# ------------------------------------------------------------------------------------ helpers


def _images(data: str, n_images: int, size: int, seed: int, n_option: str = "--images") -> Any:
    """A fresh BAM-lite set of ``data`` (an ImageDataset); ``n_option`` is the command's option
    for the number of images (its errors name it)."""
    from trustlab.explain.regions import bam_lite

    if data not in DATA_SOURCES:
        raise InputError.bad("--data", f"one of {', '.join(DATA_SOURCES)}", data)
    with options_named({"n_images": n_option, "size": "--size", "random_state": "--seed"}):
        return bam_lite(n_images, size=size, random_state=seed, **DATA_SOURCES[data])


def _names(dataset: Any) -> np.ndarray:
    """The class names of a dataset's labels (the vocabulary the models predict in)."""
    return np.asarray(dataset.class_names)[dataset.labels]


def _tau(value: str) -> str | float:
    if value.strip().lower() == "dynamic":
        return "dynamic"
    try:
        return float(value)
    except ValueError:
        raise InputError.bad("--tau", "'dynamic' or a kept-area level in (0, 1]", value) from None


def _load_folder(folder: Path, option: str) -> Any:
    """A model saved by ``save()``: a RegionSparseClassifier or a BlackBoxClassifier."""
    from trustlab.explain.regions import BlackBoxClassifier, RegionSparseClassifier

    for cls in (RegionSparseClassifier, BlackBoxClassifier):
        try:
            model = cls.load(folder)
        except InputError as exc:  # the other class's folder: try on; a damaged one: say why
            if not str(exc).startswith(("path: expected a model of format", "path: expected a fo")):
                raise InputError(f"{option}: {folder}{str(exc)[4:]}", argument=option) from exc
        else:
            # the CLI speaks class names (the generated labels are names): a model fitted in the
            # library on label indices 0..9 of bam-lite-digits predicts 3 where the data says '3'
            model.classes_ = np.asarray([str(c) for c in model.classes_])
            return model
    raise InputError.bad(
        option, "a folder written by 'trustlab explain regions train' or a model's save()",
        str(folder),
    )  # fmt: skip


def _load_model(path: Path) -> tuple[Any, dict[str, Any]]:
    """The model of a ``train`` folder (or of a folder written by ``save()``) and its record."""
    folder = path / "model" if (path / "model").is_dir() else path
    model = _load_folder(folder, "--model")
    record = path / "training.json"
    if folder == path and path.name == "model" and not record.is_file():  # DIR/model given
        record = path.parent / "training.json"
    if not record.is_file():
        return model, {}
    try:
        info: Any = json.loads(record.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        info = exc
    data = info.get("data") if isinstance(info, dict) else None
    if not isinstance(data, dict) or data.get("name") not in DATA_SOURCES:
        what = f"no readable JSON ({info})" if isinstance(info, Exception) else "other data"
        raise InputError(f"--model: {record} holds {what}, not the record of 'trustlab explain "
                         f"regions train' (data.name one of {', '.join(DATA_SOURCES)}); "
                         "rerun it or delete the file", argument="--model")  # fmt: skip
    return model, info


def _load_checkpoint(name: str) -> Any:
    from trustlab.explain.regions import CHECKPOINTS, load_checkpoint

    if name not in CHECKPOINTS:
        raise InputError.bad("--checkpoint", f"one of {', '.join(CHECKPOINTS)}", name)
    with options_named({"name": "--checkpoint"}):
        return load_checkpoint(name)


# -------------------------------------------------------------------------------------- train

#: train's parameters that only a P2P model uses -> their option.
_P2P_ONLY = {"tau": "--tau", "delta": "--delta", "segments": "--segments",
             "segmentation": "--segmentation", "covariance": "--covariance",
             "pretrain_epochs": "--pretrain-epochs"}  # fmt: skip


def _refuse_p2p_options(ctx: typer.Context, mode: str, covariance: bool) -> None:
    """Refuse a P2P-only option given on the command line with a baseline (it was dropped)."""
    from click.core import ParameterSource

    for name, option in _P2P_ONLY.items():
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT):
            if name == "covariance" and not covariance:
                option = "--no-covariance"
            raise InputError(
                f"{option}: only for P2P models, not with {mode} (the baseline has no such "
                "setting); leave it out",
                argument=option,
            )


@app.command("train")
def train(
    ctx: typer.Context,
    data: DataOption = DEFAULT_DATA,
    n_images: Annotated[
        int, typer.Option("--images", help="Images to generate (train and held-out together).")
    ] = 3000,
    size: Annotated[
        int, typer.Option("--size", help="Image side in pixels (a multiple of 8).")
    ] = 64,
    test_size: Annotated[
        float, typer.Option("--test-size", help="Share of the images held out for the accuracy.")
    ] = 0.2,
    tau: Annotated[
        str,
        typer.Option(
            "--tau",
            help="'dynamic' (chosen per image at prediction) or a fixed kept-area "
            "level in (0, 1], e.g. 0.2.",
        ),
    ] = "dynamic",
    delta: Annotated[
        float, typer.Option("--delta", help="Certainty threshold of dynamic tau.")
    ] = 0.99,
    blackbox: Annotated[
        bool, typer.Option("--blackbox", help="Train the black-box baseline on whole images.")
    ] = False,
    pixels: Annotated[
        float | None,
        typer.Option(
            "--pixels",
            help="Train Blackbox-Pixel: the CNN on an evenly spaced lattice "
            "keeping this fraction of the pixels.",
        ),
    ] = None,
    epochs: Annotated[
        int, typer.Option("--max-epochs", help="Epochs of joint training (after the pretraining).")
    ] = 15,
    pretrain_epochs: Annotated[
        int,
        typer.Option(
            "--pretrain-epochs",
            help="Epochs of the classifier alone on whole images first (P2P only).",
        ),
    ] = 5,
    segments: Annotated[int, typer.Option("--segments", help="Superpixels per image.")] = 64,
    segmentation: Annotated[
        str, typer.Option("--segmentation", help="slic or watershed superpixels.")
    ] = "slic",
    covariance: Annotated[
        bool,
        typer.Option(
            "--covariance/--no-covariance",
            help="Correlated group logits (the paper) or independent ones (ablation).",
        ),
    ] = True,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Images per training step.")] = 64,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="Adam's rate.")] = 2e-3,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the data and the training.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Folder for the model and its record.")] = Path(
        "regions_model"
    ),
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Train on fresh BAM-lite images; a rerun into the same --out resumes an interrupted P2P run
    (one of other data or settings is refused; --overwrite discards it; a baseline starts again)."""
    from trustlab.explain.regions import BlackBoxClassifier, RegionSparseClassifier

    refuse_existing(out, overwrite, ("training.json",), "a trained model")
    kind = "blackbox" if blackbox or pixels is not None else "p2p"
    if kind == "blackbox":
        _refuse_p2p_options(ctx, "--blackbox" if blackbox else "--pixels", covariance)
    tau_value = _tau(tau) if kind == "p2p" else None
    dataset = _images(data, n_images, size, seed)
    with options_named({"test_size": "--test-size"}):
        try:
            train_part, test_part = dataset.split(test_size, random_state=seed)
        except InputError:  # a valid share fails only on too few images (per class): name --images
            if not 0.0 < test_size < 1.0:
                raise
            counts = sorted(dataset.class_counts.values())
            each = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
            raise InputError(
                f"--images: {n_images} images ({each} per class of {len(counts)}) are too few "
                f"to hold out --test-size {test_size:g} of each class and train on the rest; "
                "generate more --images or change --test-size",
                argument="--images",
            ) from None
    names = {"max_epochs": "--max-epochs", "n_segments": "--segments", "kept_pixels": "--pixels",
             "checkpoint_dir": "--out", "X": "--size"}  # fmt: skip
    hints = {"checkpoint_dir": f"delete {out / '_state'} or rerun with --overwrite to start afresh"}
    if kind == "p2p":
        model: Any = RegionSparseClassifier(
            tau=tau_value, delta=delta, segmentation=segmentation, n_segments=segments,
            covariance=covariance, pretrain_epochs=pretrain_epochs, max_epochs=epochs,
            batch_size=batch_size, learning_rate=learning_rate, random_state=seed,
            checkpoint_dir=out / "_state",
        )  # fmt: skip
        total = pretrain_epochs + epochs
    else:
        model = BlackBoxClassifier(
            kept_pixels=pixels, max_epochs=epochs, batch_size=batch_size,
            learning_rate=learning_rate, random_state=seed,
        )  # fmt: skip
        total = epochs
    what = "P2P" if kind == "p2p" else ("Blackbox-Pixel" if pixels is not None else "black box")
    with progress() as bar, options_named(names, hints):
        task = bar.add_task(f"training {what} on {data}", total=total)

        note = resume_note(out / "_state")

        def report(epoch: int, n_epochs: int, history: Any) -> None:
            note(epoch)
            loss = history.loss[-1] if kind == "p2p" else history["loss"][-1]
            text = f"training {what}: epoch {epoch}/{n_epochs}, loss {loss:.3f}"
            bar.update(task, completed=epoch, total=n_epochs, description=text)

        fit_resuming(
            lambda: model.fit(train_part.images, _names(train_part), progress=report),
            out / "_state",
            overwrite,
        )
    held_out = _names(test_part)
    record: dict[str, Any] = {
        "kind": kind,
        "data": {"name": data, "n_images": n_images, "size": size, "random_state": seed,
                 "test_size": test_size},
        "params": {k: v for k, v in model.get_params().items()
                   if k not in ("checkpoint_dir", "cache_dir")},
        "classes": [str(c) for c in model.classes_],
        "n_train": len(train_part),
        "n_test": len(test_part),
    }  # fmt: skip
    if kind == "p2p":
        r = model.explain(test_part.images)
        record["test_accuracy"] = float(np.mean(model.classes_[r.prediction] == held_out))
        record["test_mean_kept_fraction"] = r.mean_kept_fraction
        record["history"] = model.history_.to_dict()
    else:
        record["test_accuracy"] = float(np.mean(model.predict(test_part.images) == held_out))
        record["test_mean_kept_fraction"] = float(model.mask_.mean())
        record["history"] = model.history_
    model.save(out / "model")
    written = [write_atomic(out / "training.json", json_text(record))]
    if kind == "p2p":
        from matplotlib.figure import Figure as MplFigure

        figure = MplFigure(figsize=(6.0, 3.5))
        model.history_.plot(ax=figure.add_subplot())
        written.append(write_png(out / "training.png", figure))
    else:
        remove_stale(out, ("training.png",))  # an earlier P2P run's, with --overwrite
    shutil.rmtree(out / "_state", ignore_errors=True)
    if as_json:
        typer.echo(json_text(record), nl=False)
    elif kind == "p2p":
        tell(model.history_.summary())
    tell(f"held-out accuracy {record['test_accuracy']:.3f} on {record['n_test']} images, mean "
         f"kept area {record['test_mean_kept_fraction']:.3f}", as_json)  # fmt: skip
    tell(f"wrote model/, {', '.join(p.name for p in written)} to {out}", as_json)


# ------------------------------------------------------------------------------------ predict


def _read_images(path: Path) -> np.ndarray:
    if not path.is_file() or path.suffix.lower() != ".npy":
        raise InputError.bad("--images", "a .npy file of images (n, 3, H, W) in [0, 1]", str(path))
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        why = npy_reason(exc)
        raise InputError(f"--images: could not read {path}: {why}", argument="--images") from exc
    return arr[None] if arr.ndim == 3 else arr


@app.command("predict")
def predict(
    model: Annotated[
        Path | None,
        typer.Option("--model", help="A folder written by 'trustlab explain regions train'."),
    ] = None,
    checkpoint: Annotated[
        str | None,
        typer.Option("--checkpoint", help="A model shipped with trustlab, e.g. p2p_dynamic."),
    ] = None,
    images: Annotated[
        Path | None,
        typer.Option(
            "--images",
            help="A .npy file of images (n, 3, H, W), floats in [0, 1], of the model's size.",
        ),
    ] = None,
    data: DataOption = None,
    n: Annotated[int, typer.Option("--n", help="With --data: images to generate.")] = 8,
    seed: SeedOption = 3,
    delta: Annotated[
        float | None,
        typer.Option("--delta", help="Certainty threshold of dynamic tau (default: the model's)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write predictions.json, regions.png (the first 8 images and their regions) and "
            "overlays/ (one PNG per image) here.",
        ),
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Predict from the selected regions; write the predictions and one overlay per image."""
    from trustlab.explain.regions import RegionSparseClassifier

    refuse_existing(out, overwrite, ("predictions.json", "regions.png"), "predictions")
    # the earlier overlays are removed before the new ones are written: without --overwrite
    # they are refused too, even where no predictions.json lies beside them
    if out is not None and not overwrite and any((out / "overlays").glob("overlay_*.png")):
        raise InputError(
            f"--out: {out} already holds overlays (overlays/overlay_*.png); pass --overwrite "
            "to replace them, or choose another --out",
            argument="--out",
        )
    if (model is None) == (checkpoint is None):
        raise InputError.bad(
            "--model", "either --model DIR or --checkpoint NAME", "both or neither"
        )
    if images is not None and data is not None:
        raise InputError.bad("--images", "either --images FILE or --data NAME", "both")
    if checkpoint is not None:
        net, info, source = _load_checkpoint(checkpoint), {}, checkpoint
    else:
        net, info = _load_model(model)
        source = str(model)
    if not isinstance(net, RegionSparseClassifier):
        raise InputError.bad(
            "--model" if model is not None else "--checkpoint",
            "a region-sparse (P2P) model; a black-box baseline selects no regions", source,
        )  # fmt: skip
    if delta is not None and net.tau != "dynamic":
        raise InputError(
            f"--delta: this model keeps a fixed tau ({net.tau:g}); --delta sets the certainty "
            "threshold of dynamic-tau models only",
            argument="--delta",
        )
    truth, no_accuracy = None, None
    if images is not None:
        x = _read_images(images)
        origin = str(images)
    else:
        name = data or info.get("data", {}).get("name", DEFAULT_DATA)
        dataset = _images(name, n, int(net.image_size_[0]), seed, n_option="--n")
        x, origin = dataset.images, f"{name} (seed {seed})"
        known, labels = list(map(str, net.classes_)), _names(dataset)
        unknown = sorted(set(labels) - set(known))
        if not set(known) <= set(dataset.class_names):  # labels of another vocabulary
            no_accuracy = (
                f"no accuracy: {name} is labelled {', '.join(dataset.class_names)}, not in the "
                f"model's classes ({', '.join(known)})"
            )
        elif unknown:  # images of classes the model lacks: it can never be right on them
            no_accuracy = (
                f"no accuracy: {np.isin(labels, unknown).sum()} of {len(labels)} images are "
                f"labelled {', '.join(unknown)}, not among the model's classes ({', '.join(known)})"
            )
        else:
            truth = labels
    with options_named({"X": "--images", "delta": "--delta"}):
        result = net.explain(x, delta=delta)
    payload = {"model": source, "images": origin, **result.to_dict()}
    if truth is not None:
        payload["true_labels"] = [str(t) for t in truth]
        payload["accuracy"] = float(np.mean(net.classes_[result.prediction] == truth))
    if as_json:
        typer.echo(json_text(payload), nl=False)
    else:
        emit(result, False)
        if truth is not None:
            tell(f"accuracy {payload['accuracy']:.3f} against the generated labels")
    if no_accuracy is not None:
        tell(no_accuracy, as_json)
    if out is None:
        return
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    for old in (out / "overlays").glob("overlay_*.png"):
        old.unlink()
    with options_named({"folder": "--out"}):  # a file in the way: refused before any output
        overlays = result.save_overlays(out / "overlays")
    written = [write_atomic(out / "predictions.json", json_text(payload))]
    ax = result.plot(n=min(8, len(result)))
    written.append(write_png(out / result.figure_name, ax.figure))
    plt.close(ax.figure)
    tell(f"wrote {', '.join(p.name for p in written)} and {len(overlays)} "
         f"overlay{'s' * (len(overlays) != 1)} (overlays/) to {out}", as_json)  # fmt: skip


# ----------------------------------------------------------------------------------- evaluate


def _progress_callback(bar: Any, n_models: int) -> Callable[[int, int, str], None]:
    task = bar.add_task(f"evaluating {n_models} models", total=n_models)

    def report(step: int, n_steps: int, what: str) -> None:
        text = "evaluated" if what == "done" else f"evaluating {what}"
        bar.update(task, completed=step, total=n_steps, description=text)

    return report


@app.command("evaluate")
def evaluate(
    checkpoint: Annotated[
        list[str] | None,
        typer.Option(
            "--checkpoint",
            help="A shipped model to evaluate (repeatable; default: every "
            "shipped model unless --model is given).",
        ),
    ] = None,
    model: Annotated[
        list[Path] | None,
        typer.Option(
            "--model", help="A folder written by 'trustlab explain regions train' (repeatable)."
        ),
    ] = None,
    data: DataOption = None,
    n: Annotated[int, typer.Option("--n", help="Test images to evaluate on.")] = 200,
    deltas: Annotated[
        str,
        typer.Option(
            "--deltas",
            help="Comma-separated certainty thresholds of the delta "
            "ablation (dynamic models); 'none' to skip it.",
        ),
    ] = "0.8,0.9,0.95,0.99",
    seed: SeedOption = 3,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write evaluation.json, regions_evaluation.png and the page regions.html (its "
            "numbers in regions.json) here.",
        ),
    ] = None,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Accuracy vs kept area, localisation, deletion/insertion fidelity and the delta ablation."""
    from trustlab.explain.regions import CHECKPOINTS, checkpoint_data, evaluate_regions

    refuse_existing(out, overwrite, ("evaluation.json", "regions.html"), "an evaluation")
    try:
        levels = () if deltas.strip().lower() == "none" else tuple(
            float(d) for d in deltas.split(",") if d.strip()
        )  # fmt: skip
    except ValueError:
        levels = None
    if levels is None or (not levels and deltas.strip().lower() != "none"):  # ',' skipped nothing
        raise InputError.bad("--deltas", "comma-separated numbers in (0, 1] or 'none'", deltas)
    if n < 1:
        raise InputError.bad("--n", "a number of images >= 1", n)
    models: dict[str, Any] = {}
    described: dict[str, str] = {}
    names = list(checkpoint or [])
    if not names and not model:
        names = [c for c in CHECKPOINTS if _shipped(c)]
        if not names:
            raise InputError.bad(
                "--checkpoint", "a shipped checkpoint or --model DIR (none is shipped yet)", None
            )
    refuse_repeats("--checkpoint", names, "each checkpoint once")
    refuse_repeats("--model", [p.resolve() for p in model or []], "each model folder once")
    for name in names:
        models[unique_key(name, models)] = _load_checkpoint(name)
        described[name] = CHECKPOINTS[name]["description"]
    info: dict[str, Any] = {}
    for path, label in zip(model or [], folder_labels(model or []), strict=True):
        net, record = _load_model(path)
        info = info or record
        models[unique_key(label, models)] = net
    sizes = {tuple(int(s) for s in m.image_size_) for m in models.values()}
    if len(sizes) > 1:
        raise InputError.bad("--model", "models of one image size", sorted(sizes))
    side = int(next(iter(sizes))[0])
    if data is None and not model:
        test = checkpoint_data("test", random_state=seed)
        if n > len(test):
            raise InputError.bad("--n", f"at most {len(test)} images (the test set's size)", n)
        dataset, data_name = test.subset(np.arange(n)), f"checkpoint test images (seed {seed})"
    else:
        name = data or info.get("data", {}).get("name", DEFAULT_DATA)
        dataset = _images(name, n, side, seed, n_option="--n")
        data_name = f"{name} (seed {seed})"
    labels = _names(dataset)
    for key, m in models.items():
        known = set(map(str, m.classes_))  # both ways: a label it lacks is never predicted
        if not known <= set(dataset.class_names) or not set(labels) <= known:
            raise InputError.bad(
                "--data", f"images labelled like model {key} ({', '.join(map(str, m.classes_))})",
                data_name,
            )  # fmt: skip
    with progress() as bar, options_named({"deltas": "--deltas"}):
        result = evaluate_regions(
            models, dataset.images, labels, dataset.masks, dataset=data_name, deltas=levels,
            random_state=seed, progress=_progress_callback(bar, len(models)),
        )  # fmt: skip
    emit(result, as_json)
    if out is None:
        return
    from matplotlib.figure import Figure as MplFigure

    from trustlab.audit.sections.regions import write_page

    out.mkdir(parents=True, exist_ok=True)
    written = [write_atomic(out / "evaluation.json", json_text(result.to_dict()))]
    figure = MplFigure(figsize=(5.5, 4.0))
    result.plot(ax=figure.add_subplot())
    written.append(write_png(out / result.figure_name, figure))
    meta = {"models": ", ".join(models), "images": n, "seed": seed, **described}
    ablations, reference = _ablations(models)
    written.extend(write_page(result, out, meta=meta, ablations=ablations, reference=reference))
    tell(f"wrote {', '.join(p.name for p in written)} to {out}", as_json)


def _ablations(models: dict[str, Any]) -> tuple[dict[str, str], str | None]:
    """The models that switch off the covariance or use watershed superpixels (what they change),
    and the full P2P model (dynamic tau, covariance, SLIC) they are compared with."""
    from trustlab.explain.regions import RegionSparseClassifier

    changes, full = {}, []
    for name, m in models.items():
        if not isinstance(m, RegionSparseClassifier):
            continue
        parts = [text for off, text in (
            (not m.covariance, "covariance off (independent group logits)"),
            (m.segmentation == "watershed", "watershed superpixels instead of SLIC"),
        ) if off]  # fmt: skip
        if parts:
            changes[name] = ", ".join(parts)
        elif m.tau == "dynamic":
            full.append(name)
    reference = "p2p_dynamic" if "p2p_dynamic" in full else (full[0] if full else None)
    return changes, reference


def _shipped(name: str) -> bool:
    """Whether the weights of checkpoint ``name`` ship with this installation."""
    from trustlab.explain.regions import checkpoint_info

    try:
        checkpoint_info(name)
    except (OSError, ValueError):  # not trained yet (an InputError is a ValueError)
        return False
    return True

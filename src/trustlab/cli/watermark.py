"""``trustlab watermark``: generate watermarked images, train and run the no-reference predictor,
describe images, evaluate, export WMarkGPT's stage datasets.

``synth --n N --seed S --out DIR`` generates images with :func:`~trustlab.watermark.synthesize`
and saves them (``images/*.png``, ``annotations.json``, ``arrays.npz``), the WMarkGPT records
(``records.json``: conversations plus the structured block) and a picture of a few examples.

``train [--data DIR | --n N --seed S] --out DIR`` fits a
:class:`~trustlab.watermark.WatermarkPredictor` on all but ``--test-size`` of the images; the
training state is saved after every epoch into ``DIR/_state``, so a rerun of the same command
after a crash or Ctrl-C continues where it stopped. DIR ends with ``model/``, ``training.json``
(settings, history, held-out numbers of
:func:`~trustlab.watermark.evaluation.evaluate_predictions`) and ``training.png``.

``predict IMAGES... --out DIR`` reads PNG/JPEG files (or folders of them), predicts and writes one
JSON per image, ``predictions.json``, heatmap overlays (``heatmaps/``, scaled down to at most
``--overlay-size`` pixels on the longer side, 2048 by default) and the HTML contact sheet
``contact_sheet.html``; an unreadable image found in a folder is skipped with a warning (listed
under ``skipped`` in ``predictions.json``), a named file must be readable. ``describe IMAGE``
prints the paragraph of the template backend, or with ``--vlm FOLDER`` the answer of a local
transformers vision-language model.

``evaluate [--data DIR | --n N --seed S] --out DIR`` scores the predictor against the generator's
truth (check-3 numbers with the controls) and the describer's paragraphs against the ground-truth
paragraphs (BLEU-1, ROUGE-L, level accuracy), with the page ``watermark_evaluation.html``.
``export --data DIR --out DIR`` writes WMarkGPT's three stage datasets.

Without ``--model`` the predictor shipped with trustlab is used.

Why this module is long: six commands, each a thin layer over the library, with their options'
help texts; splitting them would scatter one command group over several files.
"""

from __future__ import annotations

import json
import shutil
import warnings
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from trustlab._results import json_text, write_atomic, write_png
from trustlab.cli._common import (
    JSON_OPTION_HELP,
    DeviceOption,
    progress,
    resolve_device_option,
    tell,
    tracker,
)
from trustlab.cli._runs import OverwriteOption, options_named, refuse_existing, remove_stale
from trustlab.errors import InputError

__all__ = ["app", "IMAGE_SUFFIXES"]

app = typer.Typer(
    no_args_is_help=True,
    help="Watermarked-image understanding (WMarkGPT at CPU scale): generate, train, predict, "
    "describe, evaluate, export.",
)

#: The files a folder given to ``predict`` contributes (case-insensitive).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")

JsonOption = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]
ModelOption = Annotated[
    Path | None,
    typer.Option(
        "--model",
        help="A folder written by 'trustlab watermark train' (or by WatermarkPredictor.save); "
        "default: the predictor shipped with trustlab.",
    ),
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data", help="A dataset folder written by 'trustlab watermark synth' (instead of --n)."
    ),
]
KindsOption = Annotated[
    str | None,
    typer.Option(
        "--kinds",
        help="Comma-separated kinds of marks: logo, text, pattern (visible), dwtDctSvd, dwtDct, "
        "rivaGan, blind (invisible); default: those the shipped predictor was trained on.",
    ),
]
CleanOption = Annotated[
    float | None,
    typer.Option(
        "--clean-fraction",
        help="Share of images left without a watermark (default: the shipped predictor's).",
    ),
]


@app.callback()
def _group() -> None:
    """Watermarked-image understanding (WMarkGPT at CPU scale)."""


# ------------------------------------------------------------------------------------ helpers


def _kinds(kinds: str | None) -> tuple[str, ...]:
    from trustlab.watermark.checkpoints import TRAIN_DATA

    if kinds is None:
        return tuple(TRAIN_DATA["kinds"])
    return tuple(k.strip() for k in kinds.split(",") if k.strip())


def _generate(
    n: int, seed: int, kinds: str | None, clean_fraction: float | None, size: int, bar: Any
) -> Any:
    """Fresh images of the generator (an WatermarkDataset), with a progress task."""
    from trustlab.watermark.checkpoints import TRAIN_DATA
    from trustlab.watermark.synth import synthesize

    clean = TRAIN_DATA["clean_fraction"] if clean_fraction is None else clean_fraction
    names = {"n": "--n", "random_state": "--seed", "kinds": "--kinds",
             "clean_fraction": "--clean-fraction", "size": "--size"}  # fmt: skip
    with options_named(names):
        return synthesize(
            n, random_state=seed, kinds=_kinds(kinds), size=size, clean_fraction=clean,
            progress=tracker(bar, f"generating {n} images", n),
        )  # fmt: skip


def _load_data(data: Path) -> Any:
    from trustlab.watermark.synth import load_watermark_dataset

    with options_named({"path": "--data"}):
        return load_watermark_dataset(data)


def _n_images(data: Path | None, n: int | None, default: int) -> int:
    """``--n``, or its default; refused with ``--data`` (it was ignored without a word: --data of
    3 images with --n 5 evaluated the 3)."""
    if data is not None and n is not None:
        raise InputError.bad("--n", "no --n with --data (it counts generated images)", n)
    return default if n is None else n


def _dataset(data: Path | None, n: int, seed: int, kinds: str | None, clean: float | None,
             bar: Any) -> tuple[Any, dict[str, Any]]:  # fmt: skip
    """The images of ``--data`` or fresh ones of ``--n``/``--seed``, and how they were made."""
    if data is not None:
        ds = _load_data(data)
        for option, value in (("--kinds", kinds), ("--clean-fraction", clean)):
            if value is not None:  # it would be ignored without a word
                raise InputError.bad(option, f"no {option} with --data (it shapes generated "
                                     "images)", value)  # fmt: skip
        return ds, {"data": str(data), "n_images": len(ds), "random_state": ds.random_state}
    from trustlab.watermark.checkpoints import TRAIN_DATA

    ds = _generate(n, seed, kinds, clean, 256, bar)
    used = TRAIN_DATA["clean_fraction"] if clean is None else clean  # what _generate used
    return ds, {"n_images": n, "random_state": seed, "kinds": list(_kinds(kinds)),
                "clean_fraction": used}  # fmt: skip


def _load_model(model: Path | None) -> tuple[Any, str]:
    """The predictor of ``--model`` (a train folder or a saved model) or the shipped one."""
    from trustlab.watermark.nr import WatermarkPredictor

    if model is None:
        from trustlab.watermark.checkpoints import CHECKPOINT, load_checkpoint

        return load_checkpoint(), f"shipped {CHECKPOINT}"
    folder = model / "model" if (model / "model").is_dir() else model
    if not folder.is_dir():
        raise InputError.bad(
            "--model", "a folder written by 'trustlab watermark train'", str(model)
        )
    with options_named({"path": "--model"}):
        return WatermarkPredictor.load(folder), str(model)


def _eight_bit(im: Any) -> Any:
    """``im`` with 8-bit channels: Pillow's RGB conversion clips a 16-bit or 32-bit grayscale
    image's values above 255 (a 16-bit PNG came out almost white), so those are scaled."""
    from PIL import Image

    if im.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I", "F"):
        values = np.asarray(im, dtype=np.float64)
        high = float(values.max()) if values.size else 0.0
        if im.mode.startswith("I;16"):
            top = 65535.0
        elif im.mode == "F" and high <= 1.0:
            top = 1.0  # a float image in [0, 1]
        else:  # the smallest of the usual ranges that holds the values
            top = next((t for t in (255.0, 65535.0) if high <= t), high)
        scaled = np.clip(np.rint(values / top * 255.0), 0, 255).astype(np.uint8)
        return Image.fromarray(scaled)
    return im


def _opaque(im: Any) -> Any:
    """``im`` without transparency: an image with an alpha channel (RGBA, LA, a palette or
    colour key with a transparent entry) composited over white, as a page shows it. Pillow's RGB
    conversion dropped the alpha and kept whatever colour lay under the transparent pixels."""
    from PIL import Image

    if "A" not in im.mode and "transparency" not in im.info:
        return im
    rgba = im.convert("RGBA")
    return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba)


def _read_image(path: Path, option: str) -> np.ndarray:
    """A PNG/JPEG file as an RGB uint8 array (Pillow), turned upright as its EXIF orientation
    says (a phone photo stored sideways is read as every viewer shows it); transparent pixels
    are composited over white. Pillow's decompression-bomb warning (over about 89 megapixels,
    printed as a Python warning on every read) is not shown; its error (over twice that) is
    the image's refusal."""
    from PIL import Image, ImageOps

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                upright = _eight_bit(ImageOps.exif_transpose(im))
                arr = np.array(_opaque(upright).convert("RGB"))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise InputError(  # the whole path (InputError.bad shortens it): which file it was
            f"{option}: expected PNG or JPEG images that Pillow can read, got {path} ({exc})",
            argument=option,
        ) from None
    if min(arr.shape[:2]) < 8:
        raise InputError(
            f"{option}: expected images at least 8 pixels a side, got {path} {arr.shape}",
            argument=option,
        )
    return np.ascontiguousarray(arr)


def _image_files(paths: list[Path]) -> tuple[list[Path], set[Path]]:
    """The files of IMAGES: files as given, folders' PNG/JPEG files sorted by name (a broken
    link among them too, so that it is reported, not passed over); and those found in folders."""
    files: list[Path] = []
    in_folders: set[Path] = set()
    for p in paths:
        if p.is_dir():
            found = sorted(
                f
                for f in p.iterdir()
                if f.suffix.lower() in IMAGE_SUFFIXES
                and (f.is_file() or (f.is_symlink() and not f.exists()))
            )
            if not found:
                inner = sum(1 for f in p.iterdir() if f.is_dir())
                where = f" ({inner} subfolders: subfolders are not searched)" if inner else ""
                raise InputError(
                    f"IMAGES: expected folders holding PNG or JPEG files, got {p}{where}",
                    argument="IMAGES",
                )
            files.extend(found)
            in_folders.update(found)
        elif p.is_file():
            files.append(p)
        else:
            raise InputError.bad("IMAGES", "existing image files or folders", str(p))
    return files, in_folders


def _stems(files: list[Path], reserved: set[str]) -> list[str]:
    """A distinct output name per file: its stem, with ``_2``, ``_3``... where stems repeat."""
    taken, out = set(reserved), []
    for f in files:
        name, i = f.stem, 2
        while name in taken:
            name, i = f"{f.stem}_{i}", i + 1
        taken.add(name)
        out.append(name)
    return out


#: The default longest side of predict's heatmap overlays (``--overlay-size``), in pixels.
OVERLAY_SIZE = 2048


def _overlay_size(value: int) -> int:
    if value != 0 and value < 16:
        raise InputError.bad("--overlay-size", "0 (the full size) or at least 16 pixels", value)
    return value


def _overlay(path: Path, pred: Any, i: int, box: Any, size: int) -> np.ndarray:
    """Image ``i``'s heatmap overlay, scaled down (aspect ratio kept) to at most ``size`` pixels
    on its longer side; ``size`` 0 or an image already that small: the image's full size. The
    heatmap is mapped to the overlay's pixels as :meth:`WatermarkPredictions.heatmap` maps it
    to the image's, and the box is scaled with the image."""
    from PIL import Image

    from trustlab.audit.sections.watermark import heatmap_overlay

    img = _read_image(path, "IMAGES")
    h, w = img.shape[:2]
    if size == 0 or max(h, w) <= size:
        return heatmap_overlay(img, pred.heatmap(i), box)
    s = size / max(h, w)
    h2, w2 = max(1, round(h * s)), max(1, round(w * s))
    small = np.asarray(
        Image.fromarray(img).resize((w2, h2), Image.Resampling.LANCZOS, reducing_gap=2.0)
    )
    del img
    hm = pred.heatmaps[i].astype(np.float32)
    rows = np.minimum((np.arange(h2) * hm.shape[0]) // h2, hm.shape[0] - 1)
    cols = np.minimum((np.arange(w2) * hm.shape[1]) // w2, hm.shape[1] - 1)
    if box is not None:
        x0, y0, x1, y1 = box
        box = (
            int(x0 * w2 / w),
            int(y0 * h2 / h),
            min(w2, int(np.ceil(x1 * w2 / w))),
            min(h2, int(np.ceil(y1 * h2 / h))),
        )
    return heatmap_overlay(small, hm[np.ix_(rows, cols)], box)


def _threshold(value: float) -> float:
    if not 0.0 < value < 1.0:
        raise InputError.bad("--threshold", "a heatmap threshold in (0, 1)", value)
    return value


def _question(question: str | None) -> str:
    from trustlab.watermark.describer import QUESTIONS

    if question is None:
        return QUESTIONS[0]
    if not question.strip():
        raise InputError.bad("--question", "a non-empty question", question)
    return question


def _record(pred: Any, i: int, name: str, path: Path, question: str, text: str) -> dict:
    from trustlab.watermark.vocabulary import CONTENT_TYPES, LEVELS

    box = [int(v) for v in pred.boxes[i]]
    h, w = pred.image_sizes[i]
    return {
        "image": str(path),
        "name": name,
        "width": int(w),
        "height": int(h),
        "score": float(pred.scores[i]),
        "regressed_score": float(pred.regressed_scores[i]),
        "expected_score": float(pred.expected_scores[i]),
        "level": pred.levels[i],
        "level_probabilities": dict(
            zip(LEVELS, map(float, pred.level_probabilities[i]), strict=True)
        ),
        "content_type": pred.content_types[i],
        "content_probabilities": dict(
            zip(CONTENT_TYPES, map(float, pred.content_probabilities[i]), strict=True)
        ),
        "box": None if min(box) < 0 else box,
        "cell": pred.cells[i],
        "orientation": pred.orientations[i],
        "present": bool(pred.present[i]),
        "located": bool(pred.located[i]),
        "threshold": float(pred.threshold),
        "flip_average": bool(pred.flip_average),
        "question": question,
        "description": text,
    }


# -------------------------------------------------------------------------------------- synth


@app.command("synth")
def synth(
    n: Annotated[int, typer.Option("--n", help="Images to generate.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generator.")] = 0,
    kinds: KindsOption = None,
    clean_fraction: CleanOption = None,
    size: Annotated[int, typer.Option("--size", help="Image side in pixels (>= 256).")] = 256,
    out: Annotated[Path, typer.Option("--out", help="Folder for the dataset.")] = ...,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Generate watermarked images with WMarkGPT's recipe and save them with their annotations."""
    refuse_existing(out, overwrite, ("annotations.json",), "a dataset")
    with progress() as bar:
        ds = _generate(n, seed, kinds, clean_fraction, size, bar)
    written = ds.save(out)
    if overwrite:  # an earlier, larger run's extra images (its names: 00000.png, ...), removed
        # once the new dataset is saved whole (review 67: removed before, an overwrite stopped
        # in the save lost the earlier dataset the staged save keeps); a user's files are kept
        new = set(written)
        for earlier in (out / "images").glob("*.png"):
            if earlier.stem.isdigit() and earlier not in new:
                earlier.unlink()
    records = write_atomic(out / "records.json", json_text(ds.records(random_state=seed)))
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=ds.figure_size)
    ds.plot(ax=figure.add_subplot())
    picture = write_png(out / ds.figure_name, figure)
    payload = {**ds.to_dict(), "out": str(out), "first_image": ds.image_name(0)}
    if as_json:
        typer.echo(json_text(payload), nl=False)
    else:
        tell(ds.summary())
    files = [p.name for p in written if p.parent == out] + [records.name, picture.name]
    tell(f"wrote images/ ({len(ds)} PNGs), {', '.join(files)} to {out}", as_json)


# -------------------------------------------------------------------------------------- train


def _split(n: int | None, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The train and test rows of ``n`` images (``n=None``: only checks ``test_size``)."""
    if not 0.0 <= test_size < 1.0:
        raise InputError.bad("--test-size", "a share of the images in [0, 1)", test_size)
    if n is None:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    n_test = int(round(test_size * n))
    if n - n_test < 1:
        raise InputError.bad("--test-size", f"a share leaving training images of {n}", test_size)
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


@app.command("train")
def train(
    data: DataOption = None,
    n: Annotated[
        int | None,
        typer.Option("--n", help="Images to generate (train and held-out together; default 3000)."),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the generated images, the split and the fit.")
    ] = 0,
    kinds: KindsOption = None,
    clean_fraction: CleanOption = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the model and its record.")] = ...,
    max_epochs: Annotated[int, typer.Option("--max-epochs", help="Training epochs.")] = 30,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Images per training step.")] = 8,
    learning_rate: Annotated[float, typer.Option("--learning-rate", help="Adam's rate.")] = 2e-3,
    test_size: Annotated[
        float, typer.Option("--test-size", help="Share of the images held out for the numbers.")
    ] = 0.2,
    input_size: Annotated[
        int, typer.Option("--input-size", help="Side of the network input (a multiple of 16).")
    ] = 256,
    widths: Annotated[
        str, typer.Option("--widths", help="Comma-separated channels of the encoder's stages.")
    ] = "16,32,48,64,96",
    level_readout: Annotated[
        str,
        typer.Option(
            "--level-readout",
            help="How predict reads the level: score (the bin of the score) or level_head (the "
            "level head's most probable level, the score clipped into its bin; the shipped "
            "model's).",
        ),
    ] = "score",
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Train the no-reference predictor; a rerun into the same --out resumes an interrupted run."""
    from trustlab.watermark.evaluation import evaluate_predictions
    from trustlab.watermark.nr import WatermarkPredictor

    refuse_existing(out, overwrite, ("training.json",), "a trained model")
    try:
        stages = tuple(int(w) for w in widths.split(","))
    except ValueError:
        raise InputError.bad("--widths", "comma-separated channel counts", widths) from None
    state = out / "_state"
    names = {"max_epochs": "--max-epochs", "batch_size": "--batch-size",
             "learning_rate": "--learning-rate", "input_size": "--input-size",
             "widths": "--widths", "checkpoint_dir": "--out", "random_state": "--seed",
             "level_readout": "--level-readout"}  # fmt: skip
    hints = {"checkpoint_dir": f"delete {state} to start afresh"}
    model = WatermarkPredictor(
        input_size=input_size, widths=stages, max_epochs=max_epochs, batch_size=batch_size,
        learning_rate=learning_rate, random_state=seed, checkpoint_dir=state,
        level_readout=level_readout,
    )  # fmt: skip
    with options_named(names, hints):
        model.check_params()  # before the images are generated or read
    n = _n_images(data, n, 3000)
    _split(n if data is None and n >= 1 else None, test_size, seed)  # likewise (--n: below)
    with progress() as bar:
        ds, source = _dataset(data, n, seed, kinds, clean_fraction, bar)
        fit_idx, test_idx = _split(len(ds), test_size, seed)
        train_part = ds.subset(fit_idx)
        resumed = (state / "state.pt").is_file()
        if resumed:
            tell(f"trustlab: resuming the interrupted run in {state}", as_json=True)
        task = bar.add_task(f"training on {len(train_part)} images", total=max_epochs)

        def report(epoch: int, n_epochs: int, history: Any) -> None:
            text = f"training: epoch {epoch}/{n_epochs}, loss {history.loss[-1]:.3f}"
            bar.update(task, completed=epoch, total=n_epochs, description=text)

        with options_named(names, hints):
            model.fit(
                train_part.images, scores=train_part.scores, masks=train_part.masks,
                content_types=train_part.content_types, progress=report,
            )  # fmt: skip
    record: dict[str, Any] = {
        "data": {**source, "test_size": test_size},
        "params": {"input_size": input_size, "widths": list(stages), "max_epochs": max_epochs,
                   "batch_size": batch_size, "learning_rate": learning_rate,
                   "random_state": seed, "level_readout": level_readout},
        "n_train": int(len(fit_idx)),
        "n_test": int(len(test_idx)),
        "resumed": resumed,
        "history": model.history_.to_dict(),
        "test_evaluation": None,
    }  # fmt: skip
    if len(test_idx):
        test_part = ds.subset(test_idx)
        try:
            evaluation = evaluate_predictions(model.predict(test_part.images), test_part,
                                              train=train_part)  # fmt: skip
            record["test_evaluation"] = evaluation.to_dict()
        except InputError as exc:  # too few held-out visible marks to score
            record["test_evaluation_note"] = f"not evaluated: {exc}"
    model.save(out / "model")
    written = [write_atomic(out / "training.json", json_text(record))]
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(6.0, 3.5))
    model.history_.plot(ax=figure.add_subplot())
    written.append(write_png(out / "training.png", figure))
    shutil.rmtree(state, ignore_errors=True)
    if as_json:
        typer.echo(json_text(record), nl=False)
    else:
        tell(model.history_.summary())
        if record["test_evaluation"] is not None:
            tell(evaluation.summary())
        elif "test_evaluation_note" in record:
            tell(record["test_evaluation_note"])
    tell(f"wrote model/, {', '.join(p.name for p in written)} to {out}", as_json)


# ------------------------------------------------------------------------------------ predict


@app.command("predict")
def predict(
    images: Annotated[
        list[Path], typer.Argument(help="PNG/JPEG files, or folders of them (any sizes).")
    ],
    model: ModelOption = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Heatmap threshold of the box, in (0, 1).")
    ] = 0.5,
    question: Annotated[
        str | None,
        typer.Option(
            "--question",
            help="The question the paragraphs answer (default: the first of WMarkGPT's questions).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paragraphs' wording.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Folder for the JSON and the pages.")] = ...,
    overwrite: OverwriteOption = False,
    device: DeviceOption = "cpu",
    overlay_size: Annotated[
        int,
        typer.Option(
            "--overlay-size",
            help="Longest side of the heatmap overlays in pixels, scaled down keeping the aspect "
            "ratio (0: each image's full size).",
        ),
    ] = OVERLAY_SIZE,
    as_json: JsonOption = False,
) -> None:
    """Predict visibility, location and content type of images; write JSON and a contact sheet."""
    from PIL import Image

    from trustlab.audit.sections.watermark import write_contact_sheet
    from trustlab.watermark.backends import TemplateBackend

    refuse_existing(out, overwrite, ("predictions.json", "contact_sheet.html"), "predictions")
    where = resolve_device_option(device, "watermark")
    thr = _threshold(threshold)
    overlay_size = _overlay_size(overlay_size)
    q = _question(question)
    files, in_folders = _image_files(images)
    names = _stems(files, {"predictions", "contact_sheet"})
    if not overwrite:  # files of the user's own (an --out beside the images): never replaced
        targets = [f"{n}.json" for n in names] + [f"heatmaps/{n}.png" for n in names]
        found = [t for t in [*targets, "contact_sheet.json"] if (out / t).exists()]
        if found:
            raise InputError(
                f"--out: {out} already holds {', '.join(found[:5])}"
                f"{' ...' if len(found) > 5 else ''}, which predict would write; pass "
                "--overwrite to replace them, or choose another --out",
                argument="--out",
            )
    net, source = _load_model(model)
    with progress() as bar:
        report = tracker(bar, f"reading and predicting {len(files)} images", len(files))
        parts, sizes, pixels, kept, skipped = [], [], [], [], []
        for k, f in enumerate(files):  # PREDICT_CHUNK decoded images at a time
            try:
                pixels.append(_read_image(f, "IMAGES"))
            except InputError as exc:
                if f not in in_folders:  # a file the user named: refused
                    raise
                skipped.append({"image": str(f), "reason": str(exc)})
            else:
                kept.append(k)
            if pixels and (len(pixels) == PREDICT_CHUNK or k == len(files) - 1):
                parts.append(net.predict(pixels, threshold=thr, device=where))
                sizes.extend(img.shape for img in pixels)
                pixels = []
            report(k + 1, len(files))
        if not parts:
            raise InputError(
                f"IMAGES: expected at least one readable image, got none of {len(files)}: "
                + skipped[0]["reason"].removeprefix("IMAGES: "),
                argument="IMAGES",
            )
        pred = _joined(parts)
        files, names = [files[k] for k in kept], [names[k] for k in kept]
        texts = TemplateBackend(net, random_state=seed).describe_predictions(pred, [q] * len(pred))
        out.mkdir(parents=True, exist_ok=True)
        _remove_earlier(out)
        (out / "heatmaps").mkdir(exist_ok=True)
        records = []
        report = tracker(bar, f"writing {len(files)} results", len(files))
        for i, (f, name) in enumerate(zip(files, names, strict=True)):
            rec = _record(pred, i, name, f, q, texts[i])
            records.append(rec)
            write_atomic(out / f"{name}.json", json_text(rec))
            overlay = _overlay(f, pred, i, rec["box"], overlay_size)
            write_atomic(out / "heatmaps" / f"{name}.png",
                         lambda tmp, a=overlay: Image.fromarray(a).save(tmp, format="PNG"))  # fmt: skip
            del overlay
            report(i + 1, len(files))
        payload = {"model": source, "threshold": thr, "question": q, "n_images": len(files),
                   "overlay_size": overlay_size, "summary": pred.to_dict(), "images": records,
                   "skipped": skipped}  # fmt: skip
        written = [write_atomic(out / "predictions.json", json_text(payload))]
        meta = {"model": source, "question": q}
        if skipped:  # the page says what it leaves out
            names_skipped = [Path(s["image"]).name for s in skipped]
            meta["skipped (unreadable)"] = (
                f"{len(skipped)}: "
                + ", ".join(names_skipped[:10])
                + (" ..." if len(skipped) > 10 else "")
            )
        cards = [_ImageFile(f, shape) for f, shape in zip(files, sizes, strict=True)]
        shared = Counter(f.name for f in files)  # the path where two files share a name
        titles = [str(f) if shared[f.name] > 1 else f.name for f in files]
        html, _ = write_contact_sheet(pred, cards, titles, texts, out, meta=meta)
        written.append(html)
    if as_json:
        typer.echo(json_text(payload), nl=False)
    else:
        tell(pred.summary())
    if skipped:  # on stderr, after the bar: a warning, not a result
        listed = ", ".join(s["image"] for s in skipped[:5])
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        tell(f"trustlab: warning: skipped {len(skipped)} of {len(skipped) + len(files)} images, "
             f"unreadable or under 8 pixels a side (why: 'skipped' in predictions.json): "
             f"{listed}{more}", as_json=True)  # fmt: skip
    tell(f"wrote {len(files)} image JSONs, heatmaps/, {', '.join(p.name for p in written)} to "
         f"{out}", as_json)  # fmt: skip


#: Images that ``predict`` holds decoded at once: it reads, predicts and lets go of a chunk at a
#: time, and reads each image again for its overlay and its contact-sheet card, so its memory
#: does not grow with the folder (2,000 12-megapixel photos are 72 GB as RGB arrays). A multiple
#: of predict's batch sizes (2 on the CPU, 64 on a GPU), so the network sees the batches it sees
#: in one pass over the folder and the numbers are the same to the bit.
PREDICT_CHUNK = 64


class _ImageFile:
    """An image file read again when the contact sheet draws its card (one image at a time):
    ``shape`` and ``ndim`` without reading, the pixels through ``numpy.asarray``."""

    ndim = 3

    def __init__(self, path: Path, shape: tuple[int, ...]) -> None:
        self.path, self.shape = path, tuple(shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = _read_image(self.path, "IMAGES")
        return arr if dtype is None else arr.astype(dtype)


def _joined(parts: list[Any]) -> Any:
    """One WatermarkPredictions of the chunks' predictions, in order (the fields' arrays and
    tuples concatenated; threshold, flip averaging and read-out are the same in every chunk)."""
    import dataclasses

    if len(parts) == 1:
        return parts[0]
    values = {}
    for field in dataclasses.fields(parts[0]):
        first = getattr(parts[0], field.name)
        if isinstance(first, np.ndarray):
            values[field.name] = np.concatenate([getattr(p, field.name) for p in parts])
        elif isinstance(first, tuple):
            values[field.name] = tuple(v for p in parts for v in getattr(p, field.name))
        else:
            values[field.name] = first
    return type(parts[0])(**values)


def _remove_earlier(out: Path) -> None:
    """Delete the per-image files of an earlier ``predict`` into ``out`` (with --overwrite)."""
    try:
        earlier = json.loads((out / "predictions.json").read_text())["images"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    for rec in earlier if isinstance(earlier, list) else []:
        name = rec.get("name") if isinstance(rec, dict) else None
        if isinstance(name, str) and name and Path(name).name == name:
            (out / f"{name}.json").unlink(missing_ok=True)
            (out / "heatmaps" / f"{name}.png").unlink(missing_ok=True)


WmarkgptCodeOption = Annotated[
    Path | None,
    typer.Option(
        "--wmarkgpt-code",
        help="With --vlm: the folder holds WMarkGPT's own weights, run with the authors' code in "
        "this folder (a clone of github.com/TanSongBai/WMarkGPT, with its requirements).",
    ),
]


def _vlm_backend(
    vlm: Path, wmarkgpt_code: Path | None, *, max_new_tokens: int, prompt_template: str | None
) -> tuple[Any, str]:
    """The --vlm backend (WMarkGPT's own code with --wmarkgpt-code) and how to name it."""
    from trustlab.watermark.backends import HFVisionLanguageBackend

    names = {
        "model_path": "--vlm",
        "code_path": "--wmarkgpt-code",
        "prompt_template": "--prompt-template",
        "max_new_tokens": "--max-new-tokens",
    }
    with options_named(names):
        if wmarkgpt_code is None:
            backend: Any = HFVisionLanguageBackend(
                vlm, prompt_template=prompt_template, max_new_tokens=max_new_tokens
            )
            return backend, f"vlm {vlm}"
        from trustlab.watermark.wmarkgpt import WMarkGPTBackend

        if prompt_template is not None:
            raise InputError.bad(
                "--prompt-template", "no template with --wmarkgpt-code", prompt_template
            )
        backend = WMarkGPTBackend(vlm, code_path=wmarkgpt_code, max_new_tokens=max_new_tokens)
        return backend, f"wmarkgpt {vlm}"


# ----------------------------------------------------------------------------------- describe


@app.command("describe")
def describe(
    image: Annotated[Path, typer.Argument(help="A PNG or JPEG image.")],
    question: Annotated[
        str | None,
        typer.Option(
            "--question",
            help="The question to answer (default: the first of WMarkGPT's questions).",
        ),
    ] = None,
    model: ModelOption = None,
    vlm: Annotated[
        Path | None,
        typer.Option(
            "--vlm",
            help="Answer with a local transformers image-text-to-text model (a folder written by "
            "save_pretrained: Qwen2-VL, LLaVA, ...) instead of the predictor and the template; "
            "on a GPU when there is one.",
        ),
    ] = None,
    prompt_template: Annotated[
        str | None,
        typer.Option(
            "--prompt-template",
            help="With --vlm, for processors without a chat template: the text before the "
            "answer, with {image} and {question}.",
        ),
    ] = None,
    max_new_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-new-tokens", help="With --vlm: the answer's length limit (default 256)."
        ),
    ] = None,
    wmarkgpt_code: WmarkgptCodeOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paragraph's wording.")] = 0,
    as_json: JsonOption = False,
) -> None:
    """Print a WMarkGPT-style paragraph about the watermark of one image (template backend, or
    a vision-language model with --vlm)."""
    from trustlab.watermark.backends import TemplateBackend, expected_score

    q = _question(question)
    if vlm is not None and model is not None:
        raise InputError.bad("--vlm", "either --vlm or --model, not both", str(vlm))
    if wmarkgpt_code is not None and vlm is None:
        raise InputError.bad("--wmarkgpt-code", "--vlm with WMarkGPT's weights too", None)
    # the template backend has no prompt and no answer length: they were ignored without a word
    for option, value in (
        ("--prompt-template", prompt_template),
        ("--max-new-tokens", max_new_tokens),
    ):
        if value is not None and vlm is None:
            raise InputError.bad(option, "--vlm (it sets the model's prompt or answer)", value)
    if not image.is_file():
        raise InputError.bad("IMAGE", "an existing image file", str(image))
    pixels = _read_image(image, "IMAGE")
    if vlm is not None:
        backend, source = _vlm_backend(
            vlm,
            wmarkgpt_code,
            max_new_tokens=256 if max_new_tokens is None else max_new_tokens,
            prompt_template=prompt_template,
        )
        with options_named({"model_path": "--vlm", "code_path": "--wmarkgpt-code"}):
            text = backend.answer(pixels, q)
            score = expected_score(backend.level_logits(pixels)) if as_json else None
    else:
        net, source = _load_model(model)
        backend = TemplateBackend(net, random_state=seed)
        text = backend.answer(pixels, q)
        score = None
    if as_json:
        payload = {"image": str(image), "model": source, "question": q, "description": text}
        if score is not None:
            payload["expected_score"] = score
        typer.echo(json_text(payload), nl=False)
    else:
        typer.echo(text)


# ----------------------------------------------------------------------------------- evaluate


def _description_scores(pred: Any, ds: Any, seed: int) -> dict[str, Any]:
    """The predictor's paragraphs and two controls against the ground-truth paragraphs."""
    from trustlab.watermark.describer import describe as write
    from trustlab.watermark.evaluation import reference_paragraphs
    from trustlab.watermark.metrics import score_descriptions
    from trustlab.watermark.vocabulary import WatermarkFacts

    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(len(ds))]
    other = [int(s) for s in np.random.SeedSequence(seed + 1).generate_state(len(ds))]
    refs = reference_paragraphs(ds, random_state=seed)  # the describer with the `seeds` wording
    answers = {
        "predictor": [
            write(pred.facts(i), random_state=s, faint_region=pred.faint_region(i))
            for i, s in enumerate(seeds)
        ],
        "ground truth, other wording": [
            write(ds.facts(i), random_state=s) for i, s in enumerate(other)
        ],
        "constant 'no watermark'": [
            write(WatermarkFacts(present=False, score=5.0, level="invisible"), random_state=s)
            for s in seeds
        ],
    }
    return {
        name: score_descriptions(refs, texts, reference_levels=list(ds.levels))
        for name, texts in answers.items()
    }


@app.command("evaluate")
def evaluate(
    data: DataOption = None,
    n: Annotated[
        int | None, typer.Option("--n", help="Test images to generate (default 400).")
    ] = None,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Seed of the test images (the shipped model saw 1101-1116)."),
    ] = 5,
    kinds: KindsOption = None,
    clean_fraction: CleanOption = None,
    model: ModelOption = None,
    vlm: Annotated[
        Path | None,
        typer.Option(
            "--vlm",
            help="Evaluate a local transformers vision-language model (a save_pretrained folder) "
            "instead of the predictor: WMarkGPT's description metrics of its answers and the "
            "SRCC/PLCC of its level readout.",
        ),
    ] = None,
    wmarkgpt_code: WmarkgptCodeOption = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the numbers and the page.")] = ...,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Visibility, location and detection numbers with controls, and the description metrics."""
    from trustlab.audit.sections.watermark import write_evaluation_page
    from trustlab.watermark.evaluation import VISIBLE, BackendEvaluation, evaluate_predictions

    refuse_existing(out, overwrite, ("evaluation.json", "watermark_evaluation.html"),
                    "an evaluation")  # fmt: skip
    if wmarkgpt_code is not None and vlm is None:
        raise InputError.bad("--wmarkgpt-code", "--vlm with WMarkGPT's weights too", None)
    if seed < 0:  # with --data nothing else checks it (it seeds the controls and the wording)
        raise InputError.bad("--seed", "a non-negative int seed", seed)
    n = _n_images(data, n, 400)
    if vlm is not None:
        if model is not None:
            raise InputError.bad("--vlm", "either --vlm or --model, not both", str(vlm))
        _evaluate_vlm(vlm, wmarkgpt_code, data, n, seed, kinds, clean_fraction, out, as_json)
        return
    if data is None and not set(_kinds(kinds)) & set(VISIBLE):  # no --n would give any
        raise InputError.bad("--kinds", f"at least one visible kind ({', '.join(VISIBLE)}) to "
                             "score the visibility on", kinds)  # fmt: skip
    if data is None and clean_fraction is not None and clean_fraction >= 1:  # every image clean
        raise InputError.bad("--clean-fraction", "a fraction under 1, so that some images carry "
                             "a visible mark to score the visibility on", clean_fraction)  # fmt: skip
    net, source = _load_model(model)
    with progress() as bar:
        ds, origin = _dataset(data, n, seed, kinds, clean_fraction, bar)
        task = bar.add_task(f"predicting {len(ds)} images", total=None)
        pred = net.predict(ds.images)
        bar.update(task, description=f"predicted {len(ds)} images")
    with options_named({"dataset": "--n" if data is None else "--data"}):
        evaluation = evaluate_predictions(pred, ds, random_state=seed)
    scores = _description_scores(pred, ds, seed)
    payload = {
        "model": source,
        "data": origin,
        "predictor": evaluation.to_dict(),
        "descriptions": {k: v.to_dict() for k, v in scores.items()},
    }
    if as_json:
        typer.echo(json_text(payload), nl=False)
    else:
        tell(evaluation.summary())
        tell(scores["predictor"].summary())
    remove_stale(out, [BackendEvaluation.figure_name])  # an earlier --vlm run's (--overwrite)
    written = _write_evaluation(out, payload, evaluation)
    meta = {"model": source, **{k: v for k, v in origin.items() if k != "n_images"}}
    html, _ = write_evaluation_page(evaluation, out, scores, meta=meta)
    written.append(html)
    tell(f"wrote {', '.join(p.name for p in written)} to {out}", as_json)


def _evaluate_vlm(
    vlm: Path,
    wmarkgpt_code: Path | None,
    data: Path | None,
    n: int,
    seed: int,
    kinds: Any,
    clean_fraction: Any,
    out: Path,
    as_json: bool,
) -> None:
    from trustlab.audit.sections.watermark import EVALUATION_NAME
    from trustlab.watermark.evaluation import PredictorEvaluation, evaluate_backend

    backend, source = _vlm_backend(vlm, wmarkgpt_code, max_new_tokens=256, prompt_template=None)
    with progress() as bar:
        ds, origin = _dataset(data, n, seed, kinds, clean_fraction, bar)
        task = bar.add_task(f"asking {len(ds)} images", total=len(ds))
        names = {"model_path": "--vlm", "code_path": "--wmarkgpt-code",
                 "dataset": "--n" if data is None else "--data"}  # fmt: skip
        with options_named(names):
            result = evaluate_backend(
                backend, ds, random_state=seed,
                progress=lambda done, total: bar.update(task, completed=done),
            )  # fmt: skip
    payload = {"model": source, "data": origin, "backend": result.to_dict()}
    if as_json:
        typer.echo(json_text(payload), nl=False)
    else:
        tell(result.summary())
    # an earlier predictor run's page and figure (--overwrite) would contradict evaluation.json
    stale = [f"{EVALUATION_NAME}.html", f"{EVALUATION_NAME}.json", PredictorEvaluation.figure_name]
    remove_stale(out, stale)
    written = _write_evaluation(out, payload, result)
    tell(f"wrote {', '.join(p.name for p in written)} to {out}", as_json)


def _write_evaluation(out: Path, payload: dict[str, Any], result: Any) -> list[Path]:
    """``evaluation.json`` and the result's figure in ``out``: the files written."""
    from matplotlib.figure import Figure as MplFigure

    out.mkdir(parents=True, exist_ok=True)
    written = [write_atomic(out / "evaluation.json", json_text(payload))]
    figure = MplFigure(figsize=(5.5, 4.0))
    result.plot(ax=figure.add_subplot())
    written.append(write_png(out / result.figure_name, figure))
    return written


# ------------------------------------------------------------------------------------- export


@app.command("export")
def export(
    data: Annotated[
        Path, typer.Option("--data", help="A dataset folder written by 'trustlab watermark synth'.")
    ] = ...,
    out: Annotated[Path, typer.Option("--out", help="Folder for the three stage datasets.")] = ...,
    format: Annotated[
        str, typer.Option("--format", help="Conversation format (llava: the authors' schema).")
    ] = "llava",
    n_position: Annotated[
        int | None,
        typer.Option("--n-position", help="Position-lite questions (default: one per image)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the questions and answers.")] = 0,
    overwrite: OverwriteOption = False,
    as_json: JsonOption = False,
) -> None:
    """Write WMarkGPT's stage datasets (WQA-Position, WQA-Synthetic, WQA-Real) for fine-tuning."""
    from trustlab.watermark.export import STAGES, export_stages

    # WQA-Real/train.json is not asked about: an export's own is [] beside the other two, and a
    # user's real data there is kept (a folder holding only it was refused as "an export")
    earlier = tuple(f"{s}/train.json" for s in STAGES if s != "WQA-Real")
    refuse_existing(out, overwrite, earlier, "an export")
    if format != "llava":
        raise InputError.bad("--format", "llava", format)
    ds = _load_data(data)
    with options_named({"n_position": "--n-position", "random_state": "--seed"}):
        result = export_stages(ds, out, format, n_position=n_position, random_state=seed)
    if overwrite:  # an earlier, larger export's images would lie beside the new train.json
        written = {Path(f) for f in result.files}
        for stage in ("WQA-Position", "WQA-Synthetic"):  # WQA-Real/images may hold the user's
            for f in (out / stage / "images").glob("*.png"):
                if f not in written:
                    f.unlink()
    if as_json:
        typer.echo(json_text(result.to_dict()), nl=False)
    else:
        tell(result.summary())
    real = any(Path(f).parts[-2:] == ("WQA-Real", "train.json") for f in result.files)
    written = [s for s in STAGES if s != "WQA-Real" or real]  # not: a user's real data was kept
    kept = "" if real else " (kept the WQA-Real/train.json there)"
    tell(f"wrote {', '.join(written)} to {out}{kept}", as_json)

"""The no-reference predictor shipped with trustlab, and the recipe that trains it.

:data:`TRAIN_DATA` are the generator's arguments of the training images (seed 101);
:data:`TEST_DATA` (seed 102) is the held-out set whose numbers ``training.json`` records; the
tests evaluate on other seeds. ``scripts/train_watermark_checkpoint.py`` runs
:func:`train_checkpoint`; :func:`load_checkpoint` loads the shipped weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trustlab.errors import InputError

__all__ = [
    "CHECKPOINT",
    "TRAIN_DATA",
    "TEST_DATA",
    "PARAMS",
    "checkpoint_data",
    "checkpoint_info",
    "load_checkpoint",
    "train_checkpoint",
]

_HERE = Path(__file__).with_name("checkpoints")

#: The name of the shipped predictor.
CHECKPOINT = "nr_default"
#: Arguments of :func:`~trustlab.watermark.synth.synthesize` for the training images: visible
#: marks over the full opacity range, invisible marks at every default strength, clean images.
TRAIN_DATA: dict[str, Any] = {
    "n": 3000,
    "kinds": ("logo", "text", "pattern", "dwtDctSvd", "blind"),
    "clean_fraction": 0.08,
    "random_state": 101,
}
#: The held-out images of ``training.json`` (another seed of the same generator).
TEST_DATA: dict[str, Any] = {**TRAIN_DATA, "n": 400, "random_state": 102}
#: The predictor's settings.
PARAMS: dict[str, Any] = {
    "max_epochs": 100,
    "batch_size": 8,
    "learning_rate": 2e-3,
    "heatmap_max_score": None,
    "random_state": 0,
}


def checkpoint_data(
    part: str = "test", *, random_state: int | None = None, n: int | None = None
) -> Any:
    """The generated images of the checkpoint: ``"train"``, ``"test"`` or, with
    ``random_state``, fresh images of the same generator (``n`` of them)."""
    from trustlab.watermark.synth import synthesize

    if part not in ("train", "test"):
        raise InputError.bad("part", "'train' or 'test'", part)
    spec = dict(TRAIN_DATA if part == "train" else TEST_DATA)
    if random_state is not None:
        spec["random_state"] = random_state
    if n is not None:
        spec["n"] = n
    count = spec.pop("n")
    return synthesize(count, **spec)


def train_checkpoint(out_dir: str | Path, *, progress: Any = None) -> Any:
    """Train the shipped predictor from scratch into ``out_dir`` (resumable from
    ``out_dir/_state``) with its ``training.json`` (settings, history, held-out numbers)."""
    import shutil

    from trustlab.watermark.evaluation import evaluate_predictions
    from trustlab.watermark.nr import WatermarkPredictor

    out = Path(out_dir)
    train, test = checkpoint_data("train"), checkpoint_data("test")
    model = WatermarkPredictor(**PARAMS, checkpoint_dir=out / "_state")
    model.fit(
        train.images,
        scores=train.scores,
        masks=train.masks,
        content_types=train.content_types,
        progress=progress,
    )
    evaluation = evaluate_predictions(model.predict(test.images), test, train=train)
    model.save(out)
    record = {
        "name": CHECKPOINT,
        "params": PARAMS,
        "train_data": TRAIN_DATA,
        "test_data": TEST_DATA,
        "test_evaluation": evaluation.to_dict(),
    }
    (out / "training.json").write_text(json.dumps(record, indent=1, default=list) + "\n")
    shutil.rmtree(out / "_state", ignore_errors=True)
    return model


def checkpoint_info() -> dict[str, Any]:
    """The shipped predictor's ``training.json`` (settings, data, held-out numbers)."""
    return json.loads((_HERE / CHECKPOINT / "training.json").read_text())


def load_checkpoint() -> Any:
    """The shipped :class:`~trustlab.watermark.nr.WatermarkPredictor` (fitted)."""
    from trustlab.watermark.nr import WatermarkPredictor

    folder = _HERE / CHECKPOINT
    if not (folder / "model.json").is_file():
        from trustlab.errors import ConfigError

        raise ConfigError(
            f"the shipped watermark predictor is missing from {folder}; reinstall trustlab or "
            "train one with scripts/train_watermark_checkpoint.py"
        )
    return WatermarkPredictor.load(folder)

"""The no-reference predictor shipped with trustlab, and the recipe that trains it.

:data:`TRAIN_DATA` are the generator's arguments of the training images (750 images of each of
the seeds 1101-1116, 12,000 in all); :data:`TEST_DATA` (seed 102) is the held-out set whose
numbers ``training.json`` records; the tests evaluate on other seeds.
``scripts/train_watermark_checkpoint.py`` runs :func:`train_checkpoint`, made for a machine with
a GPU and about 16 GB of memory (the 12,000 images take 8.1 GB and the network's inputs about
3 GB more; on one CPU core the 25 epochs take about 3.5 hours); :func:`load_checkpoint` loads the
shipped weights.

:data:`SMALL_TRAIN_DATA` and :data:`SMALL_PARAMS` are the recipe of the predictor shipped before
(3,000 images of seed 101, 100 epochs on one CPU core), which the Table 4- and 5-like ablations
vary (``scripts/watermark_data_ablation.py``, ``scripts/watermark_pretrain_ablation.py``); that
model is kept in ``docs/results/watermark_3000/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trustlab._checks import check_positive_int
from trustlab._results import check_output_dir
from trustlab.errors import InputError

__all__ = [
    "CHECKPOINT",
    "TRAIN_DATA",
    "TEST_DATA",
    "PARAMS",
    "SMALL_TRAIN_DATA",
    "SMALL_PARAMS",
    "checkpoint_data",
    "checkpoint_info",
    "load_checkpoint",
    "train_checkpoint",
    "write_training_record",
]

_HERE = Path(__file__).with_name("checkpoints")

#: The name of the shipped predictor.
CHECKPOINT = "nr_default"
_GENERATOR: dict[str, Any] = {
    "kinds": ("logo", "text", "pattern", "dwtDctSvd", "blind"),
    "clean_fraction": 0.08,
}
#: The training images: ``n_per_seed`` images of :func:`~trustlab.watermark.synth.synthesize` for
#: each of ``seeds``, with visible marks over the full opacity range, invisible marks at every
#: default strength and clean images.
TRAIN_DATA: dict[str, Any] = {
    "n_per_seed": 750,
    "seeds": tuple(range(1101, 1117)),
    **_GENERATOR,
}
#: The held-out images of ``training.json`` (another seed of the same generator).
TEST_DATA: dict[str, Any] = {"n": 400, **_GENERATOR, "random_state": 102}
#: The predictor's settings: 25 epochs of 12,000 images are as many optimisation steps (37,500)
#: as the previous model's 100 epochs of 3,000; the level is the level head's most probable one.
PARAMS: dict[str, Any] = {
    "max_epochs": 25,
    "batch_size": 8,
    "learning_rate": 2e-3,
    "heatmap_max_score": None,
    "level_readout": "level_head",
    "random_state": 0,
}
#: The training images of the predictor shipped before (arguments of ``synthesize``).
SMALL_TRAIN_DATA: dict[str, Any] = {"n": 3000, **_GENERATOR, "random_state": 101}
#: That predictor's settings.
SMALL_PARAMS: dict[str, Any] = {**PARAMS, "max_epochs": 100, "level_readout": "score"}


_PARTS = ("train", "test", "train_small")


def checkpoint_data(
    part: str = "test",
    *,
    random_state: int | None = None,
    n: int | None = None,
    n_jobs: int | None = 1,
) -> Any:
    """The generated images of the checkpoint: ``"train"`` (the first ``n`` of them, or all
    12,000), ``"test"``, ``"train_small"`` (the previous model's) or, with ``random_state``,
    ``n`` fresh images of the same generator (``n_per_seed`` for ``"train"``); ``n_jobs``
    processes generate them (the same images for any ``n_jobs``)."""
    from trustlab.watermark.synth import synthesize

    if part not in _PARTS:
        raise InputError.bad("part", " or ".join(repr(p) for p in _PARTS), part)
    if n is not None:
        n = check_positive_int(n, "n")
    if part != "train":
        spec = dict(TEST_DATA if part == "test" else SMALL_TRAIN_DATA)
        if random_state is not None:
            spec["random_state"] = random_state
        count = spec.pop("n")
        if n is not None:
            count = n
        return synthesize(count, **spec, n_jobs=n_jobs)
    per_seed = TRAIN_DATA["n_per_seed"]
    if random_state is not None:
        count = per_seed if n is None else n
        return synthesize(count, random_state=random_state, **_GENERATOR, n_jobs=n_jobs)
    most = per_seed * len(TRAIN_DATA["seeds"])
    if n is not None and n > most:  # before anything is generated
        raise InputError.bad("n", f"at most {most} training images", n)
    total = most if n is None else n
    counts = [min(per_seed, total - start) for start in range(0, total, per_seed)]
    parts = (
        synthesize(count, random_state=seed, **_GENERATOR, n_jobs=n_jobs)
        for seed, count in zip(TRAIN_DATA["seeds"], counts, strict=False)
    )
    return _concatenate(parts, total)


def _concatenate(parts: Iterator[Any], total: int) -> Any:
    """One dataset of the ``total`` images of ``parts`` in order (its ``random_state``: the first
    part's). Each part is copied into arrays made for all of them and then let go, so the peak
    memory is one dataset and one part, not two datasets."""
    import dataclasses

    import numpy as np

    first = next(parts)
    if len(first) == total:
        return first
    fields = [f.name for f in dataclasses.fields(first)]
    arrays = {
        k: np.empty((total, *v.shape[1:]), dtype=v.dtype)
        for k in fields
        if isinstance(v := getattr(first, k), np.ndarray) and k != "ssim_cache"
    }
    scalars = ("size", "random_state", "ssim_cache")
    rest: dict[str, list] = {k: [] for k in fields if k not in arrays and k not in scalars}
    done = 0
    part: Any = first
    while part is not None:
        m = len(part)
        for k in arrays:
            arrays[k][done : done + m] = getattr(part, k)
        for k in rest:
            rest[k].extend(getattr(part, k) or ())
        done += m
        part = next(parts, None)
    values = {**arrays, **{k: tuple(v) for k, v in rest.items()}}
    values.update(size=first.size, random_state=first.random_state, ssim_cache=None)
    return type(first)(**values)


def train_checkpoint(
    out_dir: str | Path, *, progress: Any = None, device: str = "cpu", n_jobs: int | None = 1
) -> Any:
    """Train the shipped predictor from scratch into ``out_dir`` (resumable from
    ``out_dir/_state``; ``device`` as in :meth:`WatermarkPredictor.fit`; ``n_jobs`` processes
    generate the images) with its
    ``training.json`` (settings, history, held-out numbers). The controls of the held-out numbers
    (a level prior and a regression on global image statistics) learn from the first
    ``n_per_seed`` training images."""
    import shutil

    from trustlab.watermark.nr import WatermarkPredictor

    out = check_output_dir(out_dir, "out_dir")  # a file in the way: refused before the images
    train = checkpoint_data("train", n_jobs=n_jobs)
    model = WatermarkPredictor(**PARAMS, checkpoint_dir=out / "_state")
    model.fit(
        train.images,
        scores=train.scores,
        masks=train.masks,
        content_types=train.content_types,
        progress=progress,
        device=device,
    )
    del train
    model.save(out)
    write_training_record(model, out)
    shutil.rmtree(out / "_state", ignore_errors=True)
    return model


def write_training_record(model: Any, out_dir: str | Path) -> dict[str, Any]:
    """Evaluate ``model`` on :data:`TEST_DATA` and write ``out_dir/training.json``."""
    from trustlab.watermark.evaluation import evaluate_predictions

    test = checkpoint_data("test")
    control_train = checkpoint_data("train", n=TRAIN_DATA["n_per_seed"])
    evaluation = evaluate_predictions(model.predict(test.images), test, train=control_train)
    record = {
        "name": CHECKPOINT,
        "params": PARAMS,
        "train_data": TRAIN_DATA,
        "test_data": TEST_DATA,
        "controls_trained_on": f"the first {TRAIN_DATA['n_per_seed']} training images",
        "test_evaluation": evaluation.to_dict(),
    }
    (Path(out_dir) / "training.json").write_text(json.dumps(record, indent=1, default=list) + "\n")
    return record


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

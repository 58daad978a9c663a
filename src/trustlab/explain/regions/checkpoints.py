"""The small region-sparse models shipped with trustlab, and the recipe that trains them.

Every entry of :data:`CHECKPOINTS` names the model class and its settings; all train on the same
BAM-lite set (:data:`TRAIN_DATA`: 64x64 scenes with one pasted shape, label = the shape). The
settings were chosen on images of ``random_state=1``; :data:`TEST_DATA` (``random_state=2``) is the
held-out set of ``training.json``, and the tests evaluate on a third seed.
``scripts/train_regions_checkpoints.py`` trains them all (:func:`train_checkpoint`);
:func:`load_checkpoint` loads the shipped weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._results import check_output_dir
from trustlab.errors import InputError

__all__ = [
    "CHECKPOINTS",
    "TRAIN_DATA",
    "TEST_DATA",
    "checkpoint_data",
    "checkpoint_info",
    "load_checkpoint",
    "train_checkpoint",
]

_HERE = Path(__file__).with_name("checkpoints")

#: The training images of every checkpoint (arguments of :func:`~.data.bam_lite`).
TRAIN_DATA: dict[str, Any] = {
    "n_images": 3000, "label": "object", "object_source": "shapes", "size": 64, "random_state": 1,
}  # fmt: skip
#: The held-out images of ``training.json`` (another seed of the same generator).
TEST_DATA: dict[str, Any] = {**TRAIN_DATA, "n_images": 500, "random_state": 2}

_P2P = {"pretrain_epochs": 5, "max_epochs": 15, "learning_rate": 2e-3, "random_state": 0}
_BLACKBOX = {"max_epochs": 20, "learning_rate": 2e-3, "random_state": 0}

#: name -> {"kind": "p2p" | "blackbox", "description", "params"} of each shipped model.
CHECKPOINTS: dict[str, dict[str, Any]] = {
    "p2p_dynamic": {
        "kind": "p2p",
        "description": "P2P with dynamic tau (delta 0.99), correlated logits, SLIC",
        "params": {"tau": "dynamic", **_P2P},
    },
    "p2p_fixed": {
        "kind": "p2p",
        "description": "P2P at a fixed kept-area threshold tau = 0.2",
        "params": {"tau": 0.2, **_P2P},
    },
    "p2p_no_covariance": {
        "kind": "p2p",
        "description": "P2P with dynamic tau, independent group logits (covariance off)",
        "params": {"tau": "dynamic", "covariance": False, **_P2P},
    },
    "p2p_watershed": {
        "kind": "p2p",
        "description": "P2P with dynamic tau on compact-watershed superpixels instead of SLIC",
        "params": {"tau": "dynamic", "segmentation": "watershed", **_P2P},
    },
    "blackbox": {
        "kind": "blackbox",
        "description": "the same CNN on whole images",
        "params": dict(_BLACKBOX),
    },
    "blackbox_pixel": {
        "kind": "blackbox",
        "description": "Blackbox-Pixel: the CNN on an evenly spaced lattice of 20 % of the pixels",
        "params": {"kept_pixels": 0.2, **_BLACKBOX},
    },
}


def _entry(name: str) -> dict[str, Any]:
    if not isinstance(name, str) or name not in CHECKPOINTS:  # a list is unhashable
        raise InputError.bad("name", f"one of {tuple(CHECKPOINTS)}", name)
    return CHECKPOINTS[name]


def _model_class(kind: str) -> Any:
    if kind == "p2p":
        from trustlab.explain.regions.estimator import RegionSparseClassifier

        return RegionSparseClassifier
    from trustlab.explain.regions.baselines import BlackBoxClassifier

    return BlackBoxClassifier


def checkpoint_data(part: str = "test", *, random_state: int | None = None) -> Any:
    """The BAM-lite images of the checkpoints: ``"train"``, ``"test"`` or, with ``random_state``,
    fresh images of the same generator (the labels are shape names)."""
    from trustlab.explain.regions.data import bam_lite

    if part not in ("train", "test"):
        raise InputError.bad("part", "'train' or 'test'", part)
    spec = dict(TRAIN_DATA if part == "train" else TEST_DATA)
    if random_state is not None:
        spec["random_state"] = random_state
    return bam_lite(**spec)


def _labels(data: Any) -> np.ndarray:
    return np.asarray(data.class_names)[data.labels]


def train_checkpoint(
    name: str, out_dir: str | Path, *, progress: Any = None, cache_dir: str | Path | None = None
) -> Any:
    """Train checkpoint ``name`` from scratch into ``out_dir`` (resumable from
    ``out_dir/_state``) with its ``training.json`` (settings, history, held-out accuracy)."""
    import shutil

    entry = _entry(name)
    out = check_output_dir(out_dir, "out_dir")  # a file in the way: refused before training
    params = dict(entry["params"])
    cls = _model_class(entry["kind"])
    if entry["kind"] == "p2p":
        params.update(checkpoint_dir=out / "_state", cache_dir=cache_dir)
    model = cls(**params)
    train, test = checkpoint_data("train"), checkpoint_data("test")
    model.fit(train.images, _labels(train), progress=progress)
    accuracy = float(np.mean(model.predict(test.images) == _labels(test)))
    model.save(out)
    record = {
        "name": name,
        **{k: v for k, v in entry.items() if k != "params"},
        "params": entry["params"],
        "train_data": TRAIN_DATA,
        "test_data": TEST_DATA,
        "test_accuracy": accuracy,
    }
    (out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
    shutil.rmtree(out / "_state", ignore_errors=True)
    return model


def load_checkpoint(name: str) -> Any:
    """The shipped model ``name`` (a fitted RegionSparseClassifier or BlackBoxClassifier).

    Examples
    --------
    >>> load_checkpoint("p2p_fixed").tau
    0.2
    """
    entry = _entry(name)
    folder = _HERE / name
    if not (folder / "weights.safetensors").is_file():
        raise InputError.bad(
            "name",
            "a checkpoint shipped with trustlab (scripts/train_regions_checkpoints.py)",
            name,
        )
    return _model_class(entry["kind"]).load(folder)


def checkpoint_info(name: str) -> dict[str, Any]:
    """The shipped ``training.json`` of checkpoint ``name``."""
    _entry(name)
    return json.loads((_HERE / name / "training.json").read_text())

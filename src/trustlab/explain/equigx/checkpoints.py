"""The small trained networks shipped with trustlab, and the recipe that trains them.

Each entry of :data:`CHECKPOINTS` names its data (generator or bundled subset and their seeds), the
network settings and the training settings. :func:`train_checkpoint` trains one from scratch
(``scripts/train_equigx_checkpoints.py`` runs it for all and writes them into the package);
:func:`load_checkpoint` loads the shipped weights; :func:`checkpoint_data` rebuilds the exact train,
validation and test parts, so an evaluation uses graphs the network never saw.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trustlab._numerics import seeded_torch
from trustlab._results import check_output_dir, write_atomic
from trustlab.errors import InputError
from trustlab.explain.equigx.data import GraphDataset, qm9_carbonyl, shapes_in_noise

__all__ = [
    "CHECKPOINTS",
    "DATA_SOURCES",
    "checkpoint_data",
    "checkpoint_info",
    "load_checkpoint",
    "recipe_data",
    "train_checkpoint",
    "train_recipe",
]

_HERE = Path(__file__).with_name("checkpoints")

#: name -> data, model and training settings of each shipped network.
CHECKPOINTS: dict[str, dict[str, Any]] = {
    "shapes_platonic": {
        "description": "the five platonic solids hidden among 28 noise points (label: the solid)",
        "data": {"source": "shapes_in_noise", "n_graphs": 1000, "variant": "platonic",
                 "random_state": 11},
        "model": {"mul": 4, "l_max": 2, "n_layers": 3, "k": 8, "radius": 2.5,
                  "avg_neighbors": 8.0},
        "train": {"max_epochs": 20, "learning_rate": 1e-2, "batch_size": 32, "random_state": 0},
    },
    "qm9_carbonyl": {
        "description": "QM9 molecules with oxygen (label: has a C=O bond, a C-O pair < 1.25 A)",
        "data": {"source": "qm9_carbonyl", "random_state": 0},
        "model": {"mul": 4, "l_max": 2, "n_layers": 2, "k": 8, "radius": 3.0,
                  "avg_neighbors": 8.0},
        "train": {"max_epochs": 20, "learning_rate": 1e-2, "batch_size": 32, "random_state": 0},
    },
}  # fmt: skip
_TEST_SIZE, _VALIDATION_SIZE, _SPLIT_SEED = 0.2, 0.2, 0


#: ``--data`` names of the CLI -> data specs.
DATA_SOURCES: dict[str, dict[str, Any]] = {
    "shapes": {"source": "shapes_in_noise", "variant": "platonic"},
    "shapes-same-count": {"source": "shapes_in_noise", "variant": "same_count"},
    "shapes-spiral": {"source": "shapes_in_noise", "variant": "spiral"},
    "shapes-tetris": {"source": "shapes_in_noise", "variant": "tetris", "n_nodes": 16},
    "qm9": {"source": "qm9_carbonyl"},
}


def _entry(name: str) -> dict[str, Any]:
    if not isinstance(name, str) or name not in CHECKPOINTS:  # a list is unhashable
        raise InputError.bad("name", f"one of {tuple(CHECKPOINTS)}", name)
    return CHECKPOINTS[name]


def recipe_data(data: dict[str, Any]) -> dict[str, GraphDataset]:
    """The ``{"train", "validation", "test"}`` parts of a data spec (``{"source":
    "shapes_in_noise", **generator arguments}`` or ``{"source": "qm9_carbonyl", ...}``): 20 % of
    the graphs for testing, then 20 % of the rest for validation, both stratified and seeded."""
    expected = "a spec with source 'shapes_in_noise' or 'qm9_carbonyl'"
    if not isinstance(data, Mapping):  # dict() of a string or None raised a bare error
        raise InputError.bad("data", f"a dict: {expected}", data)
    spec = dict(data)
    source = spec.pop("source", None)
    makers = {"shapes_in_noise": shapes_in_noise, "qm9_carbonyl": qm9_carbonyl}
    if source not in makers:
        raise InputError.bad("data", expected, data)
    unknown = sorted(set(spec) - set(inspect.signature(makers[source]).parameters), key=str)
    if unknown:  # a bare TypeError from the generator otherwise
        raise InputError.bad(
            "data", f"{source}'s arguments", f"unknown {', '.join(map(repr, unknown))}"
        )
    dataset = makers[source](**spec)
    try:
        rest, test = dataset.split(_TEST_SIZE, random_state=_SPLIT_SEED)
        train, validation = rest.split(_VALIDATION_SIZE, random_state=_SPLIT_SEED + 1)
    except InputError:  # too few graphs of a class to hold any out
        key = "n_graphs" if source == "shapes_in_noise" else "n_molecules"
        raise InputError.bad(
            key, f"enough graphs for a stratified test part (20 %) and validation part (20 % of "
            f"the rest; {4 * dataset.n_classes} always suffice)", len(dataset),
        ) from None  # fmt: skip
    return {"train": train, "validation": validation, "test": test}


def checkpoint_data(name: str) -> dict[str, GraphDataset]:
    """The ``{"train", "validation", "test"}`` parts a shipped checkpoint was trained and tested
    on (see :func:`recipe_data`).

    Examples
    --------
    >>> parts = checkpoint_data("qm9_carbonyl")
    >>> {k: len(v) for k, v in parts.items()}
    {'train': 1920, 'validation': 480, 'test': 600}
    """
    return recipe_data(_entry(name)["data"])


def train_recipe(recipe: dict[str, Any], out_dir: str | Path, *, progress: Any = None) -> Any:
    """Train a network from a recipe ``{"data": spec, "model": TFN settings, "train":
    train_tfn settings}`` into ``out_dir``: the network (``config.json``,
    ``weights.safetensors``) and ``training.json`` (the recipe, the history, the test accuracy).
    An interrupted run resumes from ``out_dir/_state``. The training's ``random_state`` also
    seeds the network's initial weights, so a recipe trains the same network every time; the
    caller's torch random stream is left as it was.
    Returns the history."""
    from trustlab.explain.equigx.model import TensorFieldNetwork
    from trustlab.explain.equigx.training import predict_graphs, train_tfn

    out = check_output_dir(out_dir, "out_dir")  # a file in the way: refused before training
    parts = recipe_data(recipe["data"])
    train = parts["train"]
    seed = recipe.get("train", {}).get("random_state")
    # the initial weights too: the same recipe trains the same network (the caller's torch
    # stream is left as it was)
    with seeded_torch(seed) if seed is not None else contextlib.nullcontext():
        net = TensorFieldNetwork(
            n_classes=train.n_classes, n_scalars=train[0].x.shape[1], **recipe.get("model", {})
        )
    history = train_tfn(
        net, train, validation=parts["validation"], checkpoint_dir=out / "_state",
        progress=progress, **recipe.get("train", {}),
    )  # fmt: skip
    test = parts["test"]
    accuracy = float((predict_graphs(net, test).argmax(1) == test.labels).mean())
    net.save(out)
    record = {**recipe, "history": history.to_dict(), "test_accuracy": accuracy,
              "n_test": len(test), "class_names": list(train.class_names)}  # fmt: skip
    write_atomic(out / "training.json", json.dumps(record, indent=1) + "\n")  # never half
    shutil.rmtree(out / "_state", ignore_errors=True)
    return history


def train_checkpoint(name: str, out_dir: str | Path, *, progress: Any = None) -> Any:
    """Train the shipped checkpoint ``name`` from scratch into ``out_dir``
    (:func:`train_recipe`)."""
    return train_recipe({"name": name, **_entry(name)}, out_dir, progress=progress)


def load_checkpoint(name: str) -> Any:
    """The shipped network ``name`` (a :class:`TensorFieldNetwork`, in eval mode).

    Examples
    --------
    >>> net = load_checkpoint("shapes_platonic")
    >>> net.config.n_classes
    5
    """
    from trustlab.explain.equigx.model import TensorFieldNetwork

    _entry(name)
    folder = _HERE / name
    if not (folder / "weights.safetensors").is_file():
        raise InputError.bad(
            "name", "a checkpoint shipped with trustlab (scripts/train_equigx_checkpoints.py)", name
        )
    return TensorFieldNetwork.load(folder).eval()


def checkpoint_info(name: str) -> dict[str, Any]:
    """The shipped ``training.json`` of checkpoint ``name``."""
    _entry(name)
    return json.loads((_HERE / name / "training.json").read_text())

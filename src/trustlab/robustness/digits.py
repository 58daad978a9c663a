"""Bundled data and architectures for smoothing on CPU: sklearn's digits, a small MLP and CNN.

A model is saved as a folder: a torch state dict (``model.pt``, loaded with
``weights_only=True``, so no code is ever unpickled) beside a JSON description of the
architecture (``model.json``), from which :func:`load_base_model` rebuilds the module.
:func:`save_base_model` returns the folder that :func:`load_base_model` takes (and the CLI's
``--model``). Inputs are always flat feature vectors; the CNN reshapes them to square
one-channel images itself, so noise is added in the same space for both.
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive_int, check_random_state
from trustlab._lazy import require
from trustlab._numerics import seeded_torch
from trustlab._renamed import renamed_keys, renamed_keyword
from trustlab._results import replace_saved
from trustlab.errors import InputError

__all__ = [
    "ARCHITECTURES",
    "DIGITS_SPLITS",
    "digits_model",
    "load_digits_split",
    "load_base_model",
    "save_base_model",
]

ARCHITECTURES = ("mlp", "cnn")
DIGITS_SPLITS = ("train", "test", "all")
# A fixed, stratified 70/30 split of the 1,797 digits (seed 0): 1,257 train, 540 test.
_DIGITS_TEST_SIZE = 0.3
# The two files of a saved model, in its folder.
WEIGHTS_FILE = "model.pt"
DESCRIPTION_FILE = "model.json"


def load_digits_split(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits, pixels scaled to [0, 1], as (X (m, 64) float32, y (m,) int).

    ``split`` is "train" (1,257 images), "test" (540) or "all" (1,797); the split is fixed and
    stratified, so trained and certified models see the same partition everywhere.

    Examples
    --------
    >>> X, y = load_digits_split("test")
    >>> X.shape, float(X.max())
    ((540, 64), 1.0)
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    check_choice(split, "split", DIGITS_SPLITS)
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    if split == "all":
        return X, y.astype(np.int64)
    parts = train_test_split(X, y, test_size=_DIGITS_TEST_SIZE, stratify=y, random_state=0)
    X_train, X_test, y_train, y_test = parts
    if split == "train":
        return X_train, y_train.astype(np.int64)
    return X_test, y_test.astype(np.int64)


@renamed_keyword("num_features", "n_features")
@renamed_keyword("num_classes", "n_classes")
def digits_model(
    arch: str = "mlp",
    *,
    n_features: int = 64,
    n_classes: int = 10,
    hidden: int = 128,
    random_state: Any = 0,
):
    """A small classifier of flat inputs: ``"mlp"`` or ``"cnn"`` (square one-channel images).

    mlp: Linear(d, h) - ReLU - Linear(h, h) - ReLU - Linear(h, K).
    cnn: reshape to (1, s, s) - Conv(16, 3x3) - ReLU - Conv(32, 3x3) - ReLU - MaxPool(2) -
    Linear(h) - ReLU - Linear(K), with ``d = s^2``.

    ``num_features=`` / ``num_classes=`` are the deprecated names of ``n_features=`` /
    ``n_classes=`` (they work, with a FutureWarning, for one release).

    The weights are initialised from ``random_state`` without touching torch's global state:
    an int seed in [0, 2**64) (the same seed, the same weights), a numpy Generator (one draw
    of it) or None (fresh weights each call).
    The returned module carries its description in ``model.trustlab_spec`` (for
    :func:`save_base_model`).

    Examples
    --------
    >>> model = digits_model("cnn", hidden=32)
    >>> model.trustlab_spec["arch"]
    'cnn'
    """
    spec = _check_spec(
        {"arch": arch, "n_features": n_features, "n_classes": n_classes, "hidden": hidden}
    )
    return _build(spec, _torch_seed(random_state))


def _torch_seed(random_state: Any) -> int:
    """The int seed of torch's stream: an int seed as given (checked), else a draw of the
    Generator (fresh for None)."""
    rng = check_random_state(random_state)  # InputError for a bool, float, str, negative int
    if isinstance(random_state, (int, np.integer)):
        if random_state >= 2**64:  # torch's seeds are 64-bit
            raise InputError.bad("random_state", "an integer seed below 2**64", random_state)
        return int(random_state)
    return int(rng.integers(0, 2**63))


def _check_spec(spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise InputError.bad("model description", "a JSON object", spec)
    arch = check_choice(spec.get("arch"), "arch", ARCHITECTURES)
    out = {"arch": arch}
    for key, minimum in (("n_features", 1), ("n_classes", 2), ("hidden", 1)):
        out[key] = check_positive_int(spec.get(key), key, minimum=minimum)
    if arch == "cnn":
        side = math.isqrt(out["n_features"])
        if side * side != out["n_features"] or side < 2:
            raise InputError.bad(
                "arch",
                f"'mlp' for {out['n_features']} features (the CNN needs square images: a "
                "square number s * s of features, s >= 2)",
                arch,
            )
    return out


def _renamed_keys(description: Any) -> Any:
    """A saved description with the keys model.json files said before review 57
    (num_features, num_classes) under their names now (n_features, n_classes)."""
    if not isinstance(description, dict):
        return description  # refused by _check_spec
    return renamed_keys(description, {"num_features": "n_features", "num_classes": "n_classes"})


def _build(spec: dict[str, Any], random_state: int = 0):
    torch = require("torch", "torch")
    nn = torch.nn
    d, k, h = spec["n_features"], spec["n_classes"], spec["hidden"]
    with seeded_torch(random_state):
        if spec["arch"] == "mlp":
            model = nn.Sequential(
                nn.Linear(d, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, k)
            )
        else:
            side = math.isqrt(d)
            model = nn.Sequential(
                nn.Unflatten(1, (1, side, side)),
                nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                nn.MaxPool2d(2), nn.Flatten(),
                nn.Linear(32 * (side // 2) ** 2, h), nn.ReLU(),
                nn.Linear(h, k),
            )  # fmt: skip
    model.trustlab_spec = dict(spec)
    return model


def save_base_model(model: Any, folder: str | Path, **info: Any) -> Path:
    """Save ``model`` into ``folder`` (created if needed) and return the folder.

    Writes the state dict to ``model.pt`` and the architecture, with the model's description
    (``trustlab_description``, set by :func:`load_base_model`) updated by ``info`` (JSON-safe),
    to ``model.json``. ``model`` must come from :func:`digits_model` or :func:`load_base_model`
    (it carries ``trustlab_spec``). :func:`load_base_model` takes the returned folder and gives
    the model back.

    What the model was trained for belongs in ``info``, so that certifying it later needs no
    memory of the training command (``trustlab robustness train`` stores all of these and
    ``certify`` uses them when their options are omitted):

    - ``sigma``: the noise level it was trained at;
    - ``cost_matrix``: the K x K costs it was trained against (a list of lists), or None for
      standard robustness (every mistake harmful); ``harmful``: the same as a list of
      ``[true, predicted]`` pairs, for people reading the file;
    - ``method``, ``data`` and ``training`` (the :class:`TrainingResult` as a dict, with its
      held-out accuracy).

    Examples
    --------
    >>> import tempfile
    >>> folder = save_base_model(digits_model(hidden=8), tempfile.mkdtemp(), sigma=0.25)
    >>> model = load_base_model(folder)
    >>> model.trustlab_description["arch"], model.trustlab_description["sigma"]
    ('mlp', 0.25)
    """
    torch = require("torch", "torch")
    spec = getattr(model, "trustlab_spec", None)
    if spec is None:
        raise InputError.bad("model", "a module built by trustlab.robustness.digits_model", model)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    saved = {**getattr(model, "trustlab_description", {}), **info, **spec}
    text = json.dumps(saved, indent=2, sort_keys=True)  # a refusal leaves the folder as it was
    # whole or absent (replace_saved): stopped in the weights' write, the earlier model stays
    # whole; later, the folder holds no description, so nothing loads (never the new weights
    # under the old sigma and cost matrix)
    replace_saved(
        folder,
        {WEIGHTS_FILE: lambda tmp: torch.save(model.state_dict(), tmp)},
        {DESCRIPTION_FILE: text},
    )
    return folder


def load_base_model(folder: str | Path) -> Any:
    """Rebuild the model :func:`save_base_model` saved into ``folder``.

    The architecture comes from ``folder/model.json``, the weights from ``folder/model.pt``
    with ``torch.load(weights_only=True)`` (a file that holds code is refused, never run). The
    model is returned in eval mode; its ``trustlab_description`` holds the architecture and the
    saved info (method, sigma, cost matrix ...), which :func:`save_base_model` writes back.
    ``folder`` may also name one of the two files in it (``model/model.pt``): the folder is the
    model either way.
    """
    torch = require("torch", "torch")
    folder = Path(folder)
    if folder.name in (WEIGHTS_FILE, DESCRIPTION_FILE) and folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise InputError.bad(
            "model", f"a folder written by save_base_model ({WEIGHTS_FILE}, {DESCRIPTION_FILE})",
            str(folder),
        )  # fmt: skip
    weights, description_path = folder / WEIGHTS_FILE, folder / DESCRIPTION_FILE
    for file in (weights, description_path):
        if not file.is_file():
            raise InputError.bad("model", f"an existing file {file}", str(file))
    try:
        description = json.loads(description_path.read_text())
    except ValueError as exc:
        raise InputError.bad("model", f"JSON in {description_path}", str(exc)) from None
    description = _renamed_keys(description)
    model = _build(_check_spec(description))
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
    except (RuntimeError, ValueError, OSError, TypeError, EOFError, pickle.UnpicklingError) as exc:
        # Includes pickles that are not plain tensors: weights_only refuses to run their code;
        # an empty weights file is torch's EOFError with no text
        why = f"{weights.name} empty or cut short" if isinstance(exc, EOFError) else exc
        raise InputError.bad(
            "model", f"a state dict of the architecture in {DESCRIPTION_FILE}", str(why)
        ) from None
    model.eval()
    model.trustlab_description = description
    return model

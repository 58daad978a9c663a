"""Safe reading of model files, shared by the audit, the explain CLI and the saved estimators.

skops rebuilds objects without running arbitrary code; only types from scikit-learn, NumPy and
SciPy (and XGBoost / LightGBM when installed) are trusted automatically, anything else must be
named by the user. Pickle and joblib files can run any code when loaded, so they are read only
when the caller says it trusts the file.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from trustlab._results import check_output_dir, output_dir, replace_saved
from trustlab.errors import InputError, ResourceError

SKOPS_SUFFIXES = (".skops",)
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib")
_LIBRARY_MODULES = ("sklearn", "numpy", "scipy")
_OPTIONAL_LIBRARY_MODULES = ("xgboost", "lightgbm")


def trusted_library_modules() -> tuple[str, ...]:
    """Top-level modules whose types are trusted in skops files: sklearn, numpy, scipy (+ extras)."""
    extras = tuple(m for m in _OPTIONAL_LIBRARY_MODULES if importlib.util.find_spec(m) is not None)
    return _LIBRARY_MODULES + extras


def load_skops(path: Path, *, trust_types: Iterable[str] = (), argument: str = "model") -> Any:
    """Load a skops file, refusing types outside the trusted libraries and ``trust_types``."""
    import skops.io as sio

    trust_types = set(trust_types)
    untrusted = read_or_raise(
        lambda: sio.get_untrusted_types(file=path), path, "a skops file", argument
    )
    libraries = trusted_library_modules()
    refused = [t for t in untrusted if t.split(".")[0] not in libraries and t not in trust_types]
    if refused:
        flags = " ".join(f"--trust-type {t}" for t in refused)
        raise InputError(
            f"{argument}: {path.name} holds types outside {', '.join(libraries)}: "
            f"{', '.join(refused)}. Loading them may run their code. If you trust them, pass "
            f"{flags} (trust_types=[...] in Python).",
            argument=argument,
        )
    return read_or_raise(
        lambda: sio.load(path, trusted=list(untrusted)), path, "a skops file", argument
    )


def load_pickle(path: Path, *, trust_pickle: bool, argument: str = "model") -> Any:
    """Load a pickle or joblib file, only when the caller trusts it."""
    if not trust_pickle:
        raise InputError(
            f"{argument}: {path.name} is a pickle/joblib file, and loading one runs any code it "
            "contains. Save the model with skops (skops.io.dump(model, 'model.skops')), or, if "
            "you made this file yourself or fully trust it, pass --trust-pickle "
            "(trust_pickle=True in Python).",
            argument=argument,
        )
    import joblib

    return read_or_raise(lambda: joblib.load(path), path, "a pickled model", argument)


def read_or_raise(load: Callable[[], Any], path: Path, what: str, argument: str) -> Any:
    """Run a reader; any failure becomes one clear InputError line."""
    try:
        return load()
    except InputError:
        raise
    except Exception as exc:
        why = _one_line(str(exc))
        raise InputError(
            f"{argument}: could not read {path.name} as {what} ({type(exc).__name__}: {why})",
            argument=argument,
        ) from exc


def _one_line(message: str) -> str:
    """A library's message on one line: its lines joined, up to xgboost's "Stack trace:" (C++
    frames), less a source excerpt and the ^~~~ line under it (xgboost's JSON parse errors).
    Every other line stays: scikit-learn's "...incompatible dtype:" puts the dtypes on the next."""
    lines = [line.strip() for line in message.splitlines()]
    if "Stack trace:" in lines:
        lines = lines[: lines.index("Stack trace:")]
    marks = {i for i, line in enumerate(lines) if line and not set(line) - set("^~ ")}
    return " ".join(
        line for i, line in enumerate(lines) if line and i not in marks and i + 1 not in marks
    )


def read_json_object(path: Path, writer: str) -> dict[str, Any]:
    """The JSON object a ``save`` (``writer``) wrote at ``path``: a ResourceError names the file
    when it cannot be read, is not JSON or holds something other than an object."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResourceError(
            f"{path}: could not be read as the JSON {writer} writes ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(info, dict):
        raise ResourceError(
            f"{path}: expected the JSON object {writer} writes, got {type(info).__name__}"
        )
    return info


def read_saved_params(
    folder: Path,
    params_file: str,
    data_file: str,
    writer: str,
    version: int,
    keys: Iterable[str] = (),
) -> dict[str, Any]:
    """The JSON ``params_file`` of a folder an estimator's ``save`` wrote (beside its arrays in
    ``data_file``): a ResourceError names the folder when a file is missing, and the file when
    it is not JSON, is of another format version than this trustlab reads, or lacks its
    ``params`` (a mapping) or one of ``keys``."""
    params_path, data_path = folder / params_file, folder / data_file
    if not params_path.is_file() or not data_path.is_file():
        raise ResourceError(f"{folder}: expected {params_file} and {data_file} written by {writer}")
    info = read_json_object(params_path, writer)
    if info.get("format_version") != version:
        raise ResourceError(
            f"{params_path}: format version {info.get('format_version')!r}, this trustlab reads "
            f"{version}"
        )
    missing = [key for key in ("params", *keys) if key not in info]
    if missing:
        raise ResourceError(
            f"{params_path}: incomplete, it lacks {', '.join(missing)} (written by {writer}?)"
        )
    if not isinstance(info["params"], dict):
        raise ResourceError(
            f"{params_path}: expected the settings under 'params' as an object, got "
            f"{type(info['params']).__name__}"
        )
    return info


def read_saved_arrays(
    path: Path, names: Iterable[str], optional: Iterable[str] = ()
) -> dict[str, Any]:
    """The arrays ``names`` (each required) and those of ``optional`` that are there, from an
    ``.npz`` file a ``save`` wrote, read without pickle: a ResourceError names the file when it
    cannot be read or lacks one of ``names``."""
    import numpy as np

    names, optional = list(names), list(optional)
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [name for name in names if name not in data.files]
            if missing:
                raise ResourceError(
                    f"{path}: incomplete, it lacks the array(s) {', '.join(missing)} "
                    f"(it holds {', '.join(data.files) or 'none'})"
                )
            return {name: data[name] for name in names + optional if name in data.files}
    except ResourceError:
        raise
    except Exception as exc:  # not a zip, truncated, an object array: not what save wrote
        raise ResourceError(
            f"{path}: could not be read as saved arrays ({type(exc).__name__}: {exc})"
        ) from exc


def storable_params(estimator: Any) -> dict[str, Any]:
    """``estimator.get_params()`` as saved next to its arrays: a ``random_state`` that is not an
    int (a Generator cannot be stored) is saved as None."""
    import numpy as np

    params = estimator.get_params()
    if not isinstance(params.get("random_state"), (int, np.integer)):
        params["random_state"] = None
    return params


def write_model_folder(folder: Any, meta: dict, networks: dict[str, Any]) -> Any:
    """Write ``model.json`` (``meta``) and ``weights.safetensors`` (each torch network's state
    dict, keys prefixed by its name) into ``folder``; returns the folder as a Path. Numpy numbers
    in ``meta`` are written as Python ones."""
    from safetensors.torch import save_file

    # a file in the way (the folder, or one above it) is refused naming the savers' argument
    out = output_dir(folder, "path")
    state = {
        f"{name}.{k}": v.contiguous()
        for name, net in networks.items()
        for k, v in net.state_dict().items()
    }
    # whole or absent (replace_saved): stopped in the weights' write, the earlier model stays
    # whole; later, the folder holds no model.json, so it is no model (never the new weights
    # under the old description: classes, settings, history)
    text = json.dumps(meta, indent=1, default=_plain_number) + "\n"
    replace_saved(
        out,
        {"weights.safetensors": lambda tmp: save_file(state, str(tmp))},
        {"model.json": text},
    )
    return out


def _plain_number(value: Any) -> Any:
    """A numpy number (a setting such as np.float32(0.3)) as the Python one, for ``json.dumps``."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def read_saved_safetensors(path: Path) -> dict[str, Any]:
    """The numpy arrays of a ``.safetensors`` file a ``save`` wrote: a ResourceError names the
    file when it cannot be read (truncated, or not safetensors)."""
    from trustlab._lazy import require

    load_file = require("safetensors.numpy", "llm").load_file
    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises its own SafetensorError, among others
        raise ResourceError(
            f"{path}: could not be read as saved weights ({type(exc).__name__}: {exc})"
        ) from exc


def read_model_folder(path: Any, fmt: str, what: str) -> tuple[dict, dict[str, dict]]:
    """``(meta, {network name: state dict})`` of a folder written by :func:`write_model_folder`
    with format ``fmt``; ``what`` names the writer in the error for anything else."""
    from safetensors.torch import load_file

    folder = Path(path)
    meta_file = folder / "model.json"
    if not meta_file.is_file() or not (folder / "weights.safetensors").is_file():
        raise InputError.bad("path", f"a folder written by {what}", path)
    meta = read_or_raise(lambda: json.loads(meta_file.read_text()), meta_file, "JSON", "path")
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        got = meta.get("format") if isinstance(meta, dict) else meta
        raise InputError.bad("path", f"a model of format {fmt}", got)
    weights_file = folder / "weights.safetensors"
    tensors = read_or_raise(lambda: load_file(str(weights_file)), weights_file, "weights", "path")
    states: dict[str, dict] = {}
    for key, value in tensors.items():
        name, _, rest = key.partition(".")
        states.setdefault(name, {})[rest] = value
    return meta, states


def checkpoint_folder(checkpoint_dir: Any) -> Path | None:
    """A fit's ``checkpoint_dir`` as a Path (None stays None), checked before any work: an
    InputError naming ``checkpoint_dir`` where it is no path, or a file (or lies under one),
    which save_training_state's ``mkdir`` would meet only after the first epoch."""
    if checkpoint_dir is None:
        return None
    if not isinstance(checkpoint_dir, (str, os.PathLike)):
        raise InputError.bad("checkpoint_dir", "a folder path or None", checkpoint_dir)
    return check_output_dir(checkpoint_dir, "checkpoint_dir")


def load_training_state(folder: Path | None, fingerprint: Any) -> dict | None:
    """The training state :func:`save_training_state` left in ``folder`` (None when there is
    none, or no folder), refused with an InputError naming ``checkpoint_dir`` when it was left by
    a fit of other data or settings (another ``fingerprint``). A ``folder`` that is a file (or
    lies under one) is refused naming ``checkpoint_dir``: a fit calls this before its first
    epoch, and save_training_state's ``mkdir`` met it only after that epoch, as a raw error."""
    if folder is not None:
        check_output_dir(folder, "checkpoint_dir")
    if folder is None or not (Path(folder) / "state.pt").is_file():
        return None
    import torch

    path = Path(folder) / "state.pt"
    try:  # the folder's own file (written by save_training_state), hence not weights_only;
        # onto the CPU, so a state left by a fit on a GPU resumes anywhere
        state = torch.load(path, weights_only=False, map_location="cpu")
    except Exception as exc:  # truncated, overwritten or not torch's at all
        raise ResourceError(
            f"checkpoint_dir: {path} could not be read as a training state ({exc}); delete it to "
            "start afresh, or choose another checkpoint_dir"
        ) from exc
    if not isinstance(state, dict) or state.get("fingerprint") != fingerprint:
        raise InputError.bad(
            "checkpoint_dir",
            "a folder left by the same fit (same data and parameters) or an empty one",
            str(folder),
        )
    return state


def save_training_state(folder: Path | None, fingerprint: Any, state: dict) -> None:
    """Save a fit's state (``state`` plus its ``fingerprint``) into ``folder/state.pt``
    atomically (a crash mid-write leaves the previous state); nothing without a folder."""
    if folder is None:
        return
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "state.pt.tmp"
    torch.save({"fingerprint": fingerprint, **state}, tmp)
    tmp.replace(folder / "state.pt")

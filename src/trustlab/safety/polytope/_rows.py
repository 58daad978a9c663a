"""Batched greedy generation with per-row hooks: which prompts share a batch (in the row order
``LocalModel.generate`` gives them) and which rows are still generating at each forward pass.

``LocalModel.generate`` sorts a call's prompts by token length and left-pads each batch; a
call with at most ``batch_size`` prompts already in that order is one batch whose row r is
prompt r. Once a row has produced its end-of-sequence token, transformers keeps feeding it
padding until every row is done; those passes are not the row's steps (a prompt generated alone
never runs them), so the hooks here skip them: the token fed to a pass (after the first) is
the one the previous pass produced, and a row that has been fed an end-of-sequence token is
finished for the rest of the call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np


def batches_in_row_order(model: Any, texts: list[str], chat: bool, batch_size: int) -> list:
    """Indices of ``texts`` in batches of at most ``batch_size``, each sorted by token length as
    ``LocalModel.generate`` sorts (a stable sort), so a batch passed to it keeps its order."""
    lengths = [len(ids) for ids in model._encode(texts, chat)]
    order = sorted(range(len(texts)), key=lambda i: lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


class LiveRows:
    """Which rows of the running batch are still generating (``live``, a bool array)."""

    def __init__(self, eos: frozenset[int]):
        self.eos = eos
        self.live = np.ones(0, dtype=bool)
        self.passes = 0

    def start(self, n_rows: int) -> None:
        self.live, self.passes = np.ones(n_rows, dtype=bool), 0

    def fed(self, input_ids: Any) -> None:
        if self.passes:  # a later pass is fed the tokens the previous one produced
            last = input_ids[:, -1].cpu().numpy()
            self.live = self.live & ~np.isin(last, list(self.eos))
        self.passes += 1


@contextlib.contextmanager
def live_rows(model: Any) -> Iterator[LiveRows]:
    """Track the live rows of ``model.generate`` calls (call ``start(n)`` before each)."""
    rows = LiveRows(model.eos_token_ids)  # the ids generate stops at

    def hook(module: Any, args: Any, kwargs: Any) -> None:
        rows.fed(args[0] if args else kwargs["input_ids"])

    handle = model.model.get_input_embeddings().register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield rows
    finally:
        handle.remove()

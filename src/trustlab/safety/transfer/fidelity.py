"""How well a target model still works when one layer's output is replaced by a mapped one.

The spec's monitored quantity for an :class:`~trustlab.safety.transfer.ActivationMap` M from a
source model's layer L_s to a target model's layer L_t (check T5): run each text through the
source model, map its activations ``a_s`` at L_s, and run the target model on the same tokens
with its layer-L_t output replaced by ``M(a_s)``, token by token. :func:`mapped_lm_loss` reports
the target's mean next-token loss (nats per token) with and without the replacement, the
relative rise, and the mean Kullback-Leibler divergence KL(clean target || mapped target) of the
next-token distributions.

With ``align="tokens"`` (the default) both models share their tokenizer (the same token ids for
every text) and every token of the target gets its mapped activation. With ``align="offsets"``
(two tokenizers) only the target tokens that pair with a source token, their spans ending at
the same character (the pairing :func:`~trustlab.safety.transfer.paired_activations` fits
on), are replaced; the other target tokens keep their own layer output. ``n_replaced`` says how
many were replaced. Layers follow the one hook convention of
:mod:`trustlab.safety.transfer`: layer ``k`` is the output of 0-based decoder block k
("resid_post of block k").

It is a separate function rather than a part of :meth:`ActivationMap.fit`, which fits on
activation arrays and never sees the models.

torch is imported only when the function runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_positive_int, check_string_list
from trustlab._lazy import require
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.safety.transfer.mapping import (
    ALIGNMENTS,
    ActivationMap,
    _check_same_tokens,
    _offset_pairs,
    check_language_model,
    check_map_model,
    map_layer,
)

__all__ = ["MappedLoss", "mapped_lm_loss"]


@dataclass(frozen=True)
class MappedLoss(Result):
    """The target model's next-token loss, clean and with one layer's output mapped.

    Every text's tokens after its first are predicted from their prefix; the means below are
    over all those tokens of all texts (token-weighted), in nats per token.

    Attributes
    ----------
    source_model, target_model : str
        Model names.
    source_layer, target_layer : int
        The layer the source activations are read at, and the target layer whose output is
        replaced by their map.
    n_texts : int
    n_tokens : int
        Predicted tokens: the texts' tokens after the first of each.
    clean_loss : float
        Mean negative log-likelihood of the next token, target model untouched.
    mapped_loss : float
        The same with layer ``target_layer``'s output replaced by M(a_s).
    kl : float
        Mean KL(clean || mapped) between the two next-token distributions (nats per token).
    align : {"tokens", "offsets"}
        How target tokens got their mapped activation (see the module docstring).
    n_replaced : int
        Target tokens (of all texts, the first included) whose layer output was replaced: every
        token with ``align="tokens"``, the paired ones with ``"offsets"``.
    relative_rise : float
        ``(mapped_loss - clean_loss) / clean_loss`` (in ``to_dict()``).
    clean_perplexity, mapped_perplexity : float
        ``exp`` of the two losses (in ``to_dict()``).
    text_tokens : ndarray of int (n_texts,)
        Predicted tokens per text (not in ``to_dict()``; so are the three below).
    text_clean_loss, text_mapped_loss, text_kl : ndarray (n_texts,)
        Per-text means (NaN for a text of one token).
    """

    source_model: str
    target_model: str
    source_layer: int
    target_layer: int
    n_texts: int
    n_tokens: int
    clean_loss: float
    mapped_loss: float
    kl: float
    align: str = "tokens"
    n_replaced: int = 0
    text_tokens: np.ndarray = internal_field(default=None)
    text_clean_loss: np.ndarray = internal_field(default=None)
    text_mapped_loss: np.ndarray = internal_field(default=None)
    text_kl: np.ndarray = internal_field(default=None)

    _dict_extras = ("relative_rise", "clean_perplexity", "mapped_perplexity")
    figure_name = "mapped_lm_loss.png"

    @property
    def relative_rise(self) -> float:
        return (self.mapped_loss - self.clean_loss) / self.clean_loss

    @property
    def clean_perplexity(self) -> float:
        return math.exp(self.clean_loss)

    @property
    def mapped_perplexity(self) -> float:
        return math.exp(self.mapped_loss)

    def summary(self) -> str:
        return (
            f"{self.target_model!r} with layer {self.target_layer} replaced by the map of "
            f"{self.source_model!r} layer {self.source_layer}: next-token loss "
            f"{self.clean_loss:.4f} -> {self.mapped_loss:.4f} nats/token "
            f"({100 * self.relative_rise:+.2f} %), KL(clean || mapped) {self.kl:.4g} nats/token;"
            f" {self.n_tokens} tokens of {self.n_texts} texts"
            + (f", {self.n_replaced} tokens replaced (offsets)" if self.align == "offsets" else "")
        )

    def plot(self, ax: Any = None) -> Any:
        """Each text's mean loss with the mapped layer against its clean loss (y = x dashed)."""
        ax = new_axes(ax)
        ok = np.isfinite(self.text_clean_loss)
        clean, mapped = self.text_clean_loss[ok], self.text_mapped_loss[ok]
        ax.scatter(clean, mapped, s=12)
        low = float(min(clean.min(), mapped.min()))
        high = float(max(clean.max(), mapped.max()))
        ax.plot([low, high], [low, high], color="grey", linestyle="--")
        ax.set_xlabel("clean loss (nats/token)")
        ax.set_ylabel("mapped loss (nats/token)")
        ax.set_title(
            f"{self.target_model} layer {self.target_layer} <- map of "
            f"{self.source_model} layer {self.source_layer}"
        )
        return ax


def mapped_lm_loss(
    activation_map: ActivationMap,
    source_model: Any,
    target_model: Any,
    texts: Any,
    source_layer: int | None = None,
    target_layer: int | None = None,
    *,
    align: str = "tokens",
    batch_size: int = 8,
) -> MappedLoss:
    """The target's next-token loss with its layer-``target_layer`` output replaced by M(a_s).

    Each text is tokenized as :func:`~trustlab.safety.transfer.paired_activations` does (plain
    text, the tokenizer's special tokens, no chat template). For each batch, the source model's
    activations at ``source_layer`` are read and mapped; the target model then runs on the same
    right-padded tokens twice, untouched and with :meth:`~trustlab.llm.LocalModel.intervene`
    putting the mapped activations in place of its layer output at every token (padding keeps
    the layer's own output; it never reaches a real token).

    Parameters
    ----------
    activation_map : ActivationMap
        Fitted, from width ``source_model.hidden_size`` to ``target_model.hidden_size``. When it
        records the models it was fitted for (``source_model_`` / ``target_model_``), they must
        be these (by name).
    source_model, target_model : trustlab.llm.LocalModel
        Sharing a tokenizer (may be the same model), or with ``align="offsets"`` two models
        with fast tokenizers.
    texts : sequence of str
        Texts of one token add nothing (no token is predicted); at least one must have two.
    source_layer, target_layer : int or None
        0-based decoder layers; None takes the layer the map records (``source_layer_`` /
        ``target_layer_``). A layer given must equal the one recorded.
    align : {"tokens", "offsets"}, default "tokens"
        ``"tokens"``: every target token replaced (one tokenizer). ``"offsets"``: the target
        tokens paired by character offsets replaced, the others kept.
    batch_size : int, default 8
        Texts per forward pass (similar lengths together).

    Returns
    -------
    MappedLoss

    Examples
    --------
    >>> base = load_model("smollm2-135m-instruct")  # doctest: +SKIP
    >>> s, t = paired_activations(base, tuned, texts, 9, 9)  # doctest: +SKIP
    >>> to_tuned = ActivationMap(kind="affine").fit(
    ...     s, t, source_model=base, target_model=tuned, source_layer=9, target_layer=9
    ... )  # doctest: +SKIP
    >>> loss = mapped_lm_loss(to_tuned, base, tuned, held_out_texts)  # doctest: +SKIP
    >>> loss.relative_rise <= 0.10  # the spec's check T5  # doctest: +SKIP
    True
    """
    if not isinstance(activation_map, ActivationMap) or not hasattr(activation_map, "fit_"):
        raise InputError.bad("activation_map", "a fitted ActivationMap", activation_map)
    check_language_model(source_model, "source_model")
    check_language_model(target_model, "target_model")
    check_map_model(activation_map, source_model, "source")
    check_map_model(activation_map, target_model, "target")
    s_layer = map_layer(activation_map, source_model, source_layer, "source")
    t_layer = map_layer(activation_map, target_model, target_layer, "target")
    texts = check_string_list(texts, "texts", what="texts")
    align = check_choice(align, "align", ALIGNMENTS)
    batch_size = check_positive_int(batch_size, "batch_size")
    if align == "tokens" and source_model is not target_model:
        _check_same_tokens(source_model, target_model, texts)
    ids = [list(target_model.tokenizer(t, add_special_tokens=True)["input_ids"]) for t in texts]
    if max(len(seq) for seq in ids) < 2:
        raise InputError.bad("texts", "at least one text of two or more tokens", texts)
    if align == "offsets":  # (source rows, target positions) of each text
        pairs = _offset_pairs(source_model, target_model, texts)
    else:
        pairs = [(np.arange(len(seq)), np.arange(len(seq))) for seq in ids]

    torch = require("torch", "llm")
    n = len(texts)
    tokens = np.array([max(len(seq) - 1, 0) for seq in ids])
    sums = np.zeros((n, 3))  # per text: clean NLL, mapped NLL, KL, summed over its tokens
    order = sorted(range(n), key=lambda i: len(ids[i]))
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            batch = order[start : start + batch_size]
            rows = source_model.activations(
                [texts[i] for i in batch], s_layer, "all", batch_size=len(batch)
            )
            picked = np.concatenate([r[pairs[i][0]] for r, i in zip(rows, batch, strict=True)])
            mapped = activation_map.apply_torch(torch.from_numpy(picked))
            sums[batch] = _batch_sums(
                target_model,
                t_layer,
                [ids[i] for i in batch],
                [pairs[i][1] for i in batch],
                mapped,
                torch,
            )
    totals = sums.sum(axis=0) / tokens.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        per_text = sums / tokens[:, None]
    return MappedLoss(
        source_model=source_model.name,
        target_model=target_model.name,
        source_layer=s_layer,
        target_layer=t_layer,
        n_texts=n,
        n_tokens=int(tokens.sum()),
        clean_loss=float(totals[0]),
        mapped_loss=float(totals[1]),
        kl=float(totals[2]),
        align=align,
        n_replaced=int(sum(len(t) for _, t in pairs)),
        text_tokens=tokens,
        text_clean_loss=per_text[:, 0],
        text_mapped_loss=per_text[:, 1],
        text_kl=per_text[:, 2],
    )


def _batch_sums(
    model: Any,
    layer: int,
    seqs: list[list[int]],
    positions: list[np.ndarray],
    mapped: Any,
    torch: Any,
) -> np.ndarray:
    """Per sequence: summed clean NLL, mapped NLL and KL(clean || mapped) over its predicted
    tokens. ``mapped`` holds the replacement rows of the tokens at ``positions`` (increasing
    indices into each sequence), sequence by sequence; other tokens keep the layer's output."""
    width = max(len(seq) for seq in seqs)
    pad = model.tokenizer.pad_token_id
    input_ids = torch.full((len(seqs), width), int(pad or 0), dtype=torch.long)
    real = torch.zeros((len(seqs), width), dtype=torch.bool)
    for row, seq in enumerate(seqs):
        input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        real[row, : len(seq)] = True
    device = model.model.device
    input_ids, real = input_ids.to(device), real.to(device)
    # the replaced tokens in row-major order are the rows of ``mapped``, text by text
    replaced = torch.zeros((len(seqs), width), dtype=torch.bool)
    for row, where in enumerate(positions):
        replaced[row, torch.as_tensor(where, dtype=torch.long)] = True
    replaced = replaced.to(device)
    replacement = torch.zeros((len(seqs), width, mapped.shape[-1]), dtype=mapped.dtype)
    replacement = replacement.to(device)
    replacement[replaced] = mapped.to(device)
    keep = replaced[..., None]

    def forward() -> Any:
        out = model.model(input_ids=input_ids, attention_mask=real.long(), use_cache=False)
        return out.logits

    clean = forward()
    with model.intervene(layer, lambda h: torch.where(keep, replacement.to(h.dtype), h)):
        changed = forward()
    sums = np.zeros((len(seqs), 3))
    for row, seq in enumerate(seqs):
        if len(seq) < 2:
            continue
        targets = input_ids[row, 1 : len(seq), None]
        log_clean = torch.log_softmax(clean[row, : len(seq) - 1].double(), dim=-1)
        log_mapped = torch.log_softmax(changed[row, : len(seq) - 1].double(), dim=-1)
        kl = (log_clean.exp() * (log_clean - log_mapped)).sum(dim=-1)
        sums[row] = (
            -float(log_clean.gather(1, targets).sum()),
            -float(log_mapped.gather(1, targets).sum()),
            float(kl.sum()),
        )
    return sums

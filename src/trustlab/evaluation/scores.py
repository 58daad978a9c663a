"""Per-item uncertainty statistics of one model's outputs, and the token log-probabilities of
generative models.

A model's output on an item is a distribution over K classes (probabilities or logits) or, for a
generative model, the log-probabilities of the tokens it emitted (:class:`TokenLogProbs`). Each
score turns it into one number per item; :func:`item_scores` is the public entry point, and the
kernels below it (``class_statistics``, ``token_statistics``) trust inputs already checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from trustlab._checks import as_1d, as_float_array, check_bool, check_choice
from trustlab.errors import InputError

__all__ = ["SCORES", "TOKEN_POSITIONS", "TokenLogProbs", "item_scores"]

SCORES = ("nll", "entropy", "max_prob", "margin")
TOKEN_POSITIONS = ("first", "key", "mean", "sum")
# The scores a generative answer's tokens support (entropy and margin need the full distribution).
TOKEN_SCORES = ("nll", "max_prob")
LOWER_IS_CONFIDENT = {"nll": True, "entropy": True, "max_prob": False, "margin": False}
SCORE_MEANING = {
    "nll": "mean negative log-probability of the predicted answer; lower = more confident",
    "entropy": "mean entropy of the predictive distribution in nats; lower = more confident",
    "max_prob": "mean probability of the predicted answer; higher = more confident",
    "margin": "mean gap between the two largest probabilities; higher = more confident",
}
# Rows of probabilities may be off by float32 rounding; anything further is not a distribution.
_ROW_SUM_TOLERANCE = 1e-4


@dataclass(frozen=True, eq=False)
class TokenLogProbs:
    """The log-probabilities of the tokens a generative model emitted, one sequence per item.

    Parameters
    ----------
    sequences : sequence of 1-D array-like, or a 2-D array
        ``sequences[i][t]`` is ``log p(token t of the answer to item i)`` (natural log, <= 0), as
        LLM APIs return them for the generated answer (greedy decoding).
    key_positions : 1-D array-like of int, optional
        For each item, the index of the key token in its sequence (the option letter of a
        multiple-choice answer); needed for ``token_position="key"``.

    Examples
    --------
    >>> tokens = TokenLogProbs([[-0.1, -0.5], [-0.05]], key_positions=[1, 0])
    >>> tokens.log_likelihood("mean").round(3).tolist()
    [-0.3, -0.05]
    """

    sequences: Any
    key_positions: Any = None

    def __post_init__(self) -> None:
        sequences = _as_sequences(self.sequences)
        object.__setattr__(self, "sequences", sequences)
        if self.key_positions is not None:
            keys = _check_key_positions(self.key_positions, sequences)
            object.__setattr__(self, "key_positions", keys)

    def __len__(self) -> int:
        return len(self.sequences)

    def log_likelihood(self, position: str = "mean") -> np.ndarray:
        """The per-item log-likelihood at ``position``: "first", "key", "mean" or "sum" of tokens.

        "mean" is the length-normalised log-likelihood (minus lm-polygraph's Perplexity score),
        "sum" the sequence log-likelihood (minus its MaximumSequenceProbability).
        """
        check_choice(position, "token_position", TOKEN_POSITIONS)
        check_key_tokens(position, [self])
        return self._log_likelihood(position)

    def _log_likelihood(self, position: str) -> np.ndarray:
        """:meth:`log_likelihood` for a ``position`` already checked against these tokens."""
        lengths = np.array([len(s) for s in self.sequences])
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        flat = np.concatenate(self.sequences)
        if position == "first":
            return flat[starts]
        if position == "key":
            return flat[starts + self.key_positions]
        totals = np.add.reduceat(flat, starts)
        return totals if position == "sum" else totals / lengths


def _as_sequences(value: Any) -> tuple[np.ndarray, ...]:
    if isinstance(value, np.ndarray) and value.ndim == 2:
        value = list(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError.bad(
            "sequences", "a sequence of 1-D arrays of token log-probabilities", value
        )
    if len(value) < 1:
        raise InputError.bad("sequences", "at least one sequence", value)
    out = []
    for i, seq in enumerate(value):
        arr = as_float_array(seq, f"sequences[{i}]", ndim=1)
        if (arr > 1e-9).any():
            raise InputError.bad(f"sequences[{i}]", "log-probabilities (<= 0)", float(arr.max()))
        out.append(np.minimum(arr, 0.0))
    return tuple(out)


def _check_key_positions(value: Any, sequences: tuple[np.ndarray, ...]) -> np.ndarray:
    keys = as_1d(value, "key_positions")
    if len(keys) != len(sequences):
        raise InputError.bad(
            "key_positions", f"{len(sequences)} positions (one per sequence)", keys
        )
    if keys.dtype.kind not in "iu":
        raise InputError.bad("key_positions", "integer token indices", keys)
    lengths = np.array([len(s) for s in sequences])
    outside = (keys < 0) | (keys >= lengths)
    if outside.any():
        i = int(np.argmax(outside))
        raise InputError.bad(f"key_positions[{i}]", f"an index in [0, {lengths[i]})", int(keys[i]))
    return keys.astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Checks at the public boundary (item_scores, rank_models)


def check_key_tokens(position: str, tokens: Sequence[TokenLogProbs]) -> None:
    """``position`` (one of TOKEN_POSITIONS) is "key" only when every output has key tokens."""
    if position == "key" and any(t.key_positions is None for t in tokens):
        raise InputError.bad(
            "token_position",
            "'first', 'mean' or 'sum' without key_positions in TokenLogProbs",
            position,
        )


def check_token_score(score: str) -> str:
    """``score`` (one of SCORES) is one that token log-probabilities support."""
    if score not in TOKEN_SCORES:
        raise InputError.bad(
            "score",
            "'nll' or 'max_prob' for TokenLogProbs outputs (entropy "
            "and margin need the full distribution: pass (n, K) "
            "probabilities over the answer options)",
            score,
        )
    return score


def check_class_output(value: Any, name: str, from_logits: bool) -> np.ndarray:
    """(n, K) logits, or probabilities checked to be distributions and renormalised exactly."""
    arr = as_float_array(value, name)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise InputError.bad(
            name,
            "an (n, K) array of class probabilities (or logits with "
            "from_logits=True) with K >= 2, or TokenLogProbs",
            arr,
        )
    if from_logits:
        return arr
    if (arr < 0).any():
        where = tuple(int(i) for i in np.argwhere(arr < 0)[0])
        raise InputError.bad(
            f"{name}[{where[0]}, {where[1]}]",
            "a probability (>= 0; pass from_logits=True for logits or log-probabilities)",
            arr[where],
        )
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0)
    if off.max() > _ROW_SUM_TOLERANCE:
        row = int(np.argmax(off))
        raise InputError.bad(
            f"{name}[{row}]",
            "a probability distribution (a row summing to 1; pass from_logits=True for logits)",
            f"a row summing to {sums[row]:.6g}",
        )
    # Rows off by rounding only (< 1e-13) are used as they are: no copy of a large input.
    return arr if off.max() <= 1e-13 else arr / sums[:, None]


# ---------------------------------------------------------------------------------------------
# Kernels (inputs checked)


def class_statistics(values: np.ndarray, is_logits: bool, score: str):
    """Per-item score, probability of the predicted class and the predicted class."""
    log_p = special.log_softmax(values, axis=1) if is_logits else None
    probs = np.exp(log_p) if is_logits else values
    predictions = np.argmax(probs, axis=1)
    max_prob = np.take_along_axis(probs, predictions[:, None], axis=1)[:, 0]
    if score == "nll":
        item = -log_p.max(axis=1) if is_logits else -np.log(max_prob)
    elif score == "entropy" and is_logits:
        # log p is -inf only where p is 0 (logits spread beyond ~1e308): those terms are 0
        item = -(probs * np.maximum(log_p, np.finfo(np.float64).min)).sum(axis=1)
    elif score == "entropy":
        item = special.entr(probs).sum(axis=1)
    elif score == "max_prob":
        item = max_prob
    else:  # margin
        item = max_prob - np.partition(probs, -2, axis=1)[:, -2]
    return item, max_prob, predictions


def token_statistics(tokens: TokenLogProbs, score: str, position: str) -> np.ndarray:
    """Per-item "nll" or "max_prob" of a generative model's answer tokens at ``position``."""
    log_likelihood = tokens._log_likelihood(position)
    # Under greedy decoding the emitted token is the most probable one: p(y_hat) = max p.
    return -log_likelihood if score == "nll" else np.exp(log_likelihood)


# ---------------------------------------------------------------------------------------------
# Public entry point


def item_scores(
    output: Any,
    score: str = "nll",
    *,
    from_logits: bool = False,
    token_position: str = "mean",
) -> np.ndarray:
    """The per-item uncertainty statistic of one model's outputs.

    Parameters
    ----------
    output : array-like of shape (n, K), or TokenLogProbs
        Class probabilities (rows summing to 1), logits with ``from_logits=True``, or the
        log-probabilities of a generative model's answer tokens.
    score : {"nll", "entropy", "max_prob", "margin"}
        ``-log max_k p_k``, ``-sum_k p_k log p_k``, ``max_k p_k`` or ``p_(1) - p_(2)``. For
        TokenLogProbs, "nll" is ``-log p`` of the answer at ``token_position`` and "max_prob" is
        ``p`` (greedy decoding).
    from_logits : bool
        Treat a 2-D ``output`` as logits (a softmax is applied); e.g. the log-probabilities an
        LLM gives the option letters of a multiple-choice question.
    token_position : {"first", "key", "mean", "sum"}
        For TokenLogProbs: the first token, the key token, the mean over tokens or their sum.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> item_scores([[0.9, 0.1], [0.5, 0.5]], "max_prob").tolist()
    [0.9, 0.5]
    """
    check_choice(score, "score", SCORES)
    check_choice(token_position, "token_position", TOKEN_POSITIONS)
    from_logits = check_bool(from_logits, "from_logits")
    if isinstance(output, TokenLogProbs):
        check_token_score(score)
        check_key_tokens(token_position, [output])
        return token_statistics(output, score, token_position)
    values = check_class_output(output, "output", from_logits)
    return class_statistics(values, from_logits, score)[0]

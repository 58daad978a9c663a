"""Calibration for label-free ranking: temperature scaling and the miscalibration diagnostics.

Ranking models by their own confidence assumes the models are calibrated alike. Two label-free
signs that they are not:

* a model reports probability 1 on many items (1-nearest-neighbour, deep trees, naive Bayes);
* two models' mean confidences differ by more than their accuracies possibly can. Two models that
  disagree on a fraction ``d`` of the items have accuracies at most ``d`` apart (where they agree they
  are both right or both wrong), so a gap in mean confidence larger than ``d`` is a difference in
  calibration of at least ``gap - d``.

The second does not say the ranking is wrong: models of one family that are trained less are
often both less accurate and less confident, and rank well. Another sign is a ranking by
confidence that disagrees with the ranking by agreement with the other models' majority vote,
which needs no calibration (:func:`consensus_agreement`) but misleads when the zoo holds many
similar, weak models.

Temperature scaling (Guo et al. 2017) fixes the second on a small labelled slice: one scalar
``T`` per model, chosen to minimise the negative log-likelihood of the slice's labels.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

__all__ = [
    "PROBABILITY_FLOOR",
    "TEMPERATURE_BOUNDS",
    "logits_from_probabilities",
    "tempered_log_probabilities",
    "temperature_nll",
    "fit_temperature",
    "certain_fraction",
    "confidence_gap_excess",
    "pair_slack",
    "consensus_agreement",
]

# Probabilities of exactly 0 (kNN, trees) would make their logits -inf and the model impossible to
# soften; flooring them at 1e-12 keeps every temperature finite and changes other models by < 1e-11.
PROBABILITY_FLOOR = 1e-12
TEMPERATURE_BOUNDS = (1e-2, 1e2)
# Below about -745 a log-probability is a probability of 0; -1e307 leaves room for sums of them.
_LOG_PROBABILITY_FLOOR = -1e307
# A probability this close to 1 is "certain": no softmax of finite, moderate logits gets there.
CERTAIN_ABOVE = 1.0 - 1e-12


def logits_from_probabilities(probabilities: np.ndarray) -> np.ndarray:
    """Logits whose softmax is ``probabilities`` (with zeros floored at PROBABILITY_FLOOR)."""
    return np.log(np.maximum(probabilities, PROBABILITY_FLOOR))


def tempered_log_probabilities(logits: np.ndarray, temperature: float) -> np.ndarray:
    """``log_softmax(logits / temperature)``, finite for every finite input.

    Each row is shifted by its maximum before the division (``logits / 0.01`` is infinite
    from about 1.8e306 on) and the scaled shifts are floored at -1e307, so a class too
    improbable to represent (below about -745 its probability is 0 already) gets
    log-probability -1e307, not -inf or NaN.
    """
    shifted = logits - logits.max(axis=1, keepdims=True)  # <= 0; -inf if the spread overflows
    with np.errstate(over="ignore"):
        scaled = np.maximum(shifted / temperature, _LOG_PROBABILITY_FLOOR)
    return special.log_softmax(scaled, axis=1)


def temperature_nll(logits: np.ndarray, label_index: np.ndarray, temperature: float) -> float:
    """Mean negative log-likelihood of the labels under ``softmax(logits / temperature)``."""
    rows = np.arange(len(label_index))
    log_p = tempered_log_probabilities(logits, temperature)[rows, label_index]
    return float(np.sum(-log_p / len(log_p)))  # divided first: a mean of -1e307s stays finite


def fit_temperature(logits: np.ndarray, label_index: np.ndarray) -> float:
    """The temperature in TEMPERATURE_BOUNDS minimising :func:`temperature_nll`.

    The NLL is convex in the inverse temperature, hence unimodal in ``log T``: a bounded Brent
    search on ``log T`` finds its global minimum on the interval. Where an end of the interval
    is as good (the NLL still falls there, or is flat in float64 near it: a slice predicted all
    right gives an NLL of exactly 0 below some temperature), that end is returned: the slice
    does not bound the temperature on that side. Where both ends are as good (the NLL does not
    depend on the temperature: every row's logits are equal, a uniform model), 1.0 is returned:
    no temperature changes such outputs, and an end would read as a fit that reached it.
    """
    low, high = np.log(TEMPERATURE_BOUNDS[0]), np.log(TEMPERATURE_BOUNDS[1])
    # the NLL is largest at an end; near 1e308 (logits ~1e306) the search's own products would
    # overflow, so there it minimises the NLL divided by that (the same minimiser)
    scale = max(temperature_nll(logits, label_index, end) for end in TEMPERATURE_BOUNDS)
    scale = scale if scale > 1e100 else 1.0
    found = optimize.minimize_scalar(
        lambda log_t: temperature_nll(logits, label_index, float(np.exp(log_t))) / scale,
        bounds=(low, high),
        method="bounded",
        options={"xatol": 1e-8},
    )
    fitted = float(np.exp(found.x))
    best = temperature_nll(logits, label_index, fitted)
    ends = [end for end in TEMPERATURE_BOUNDS if temperature_nll(logits, label_index, end) <= best]
    if len(ends) == 2:  # flat: the outputs do not depend on the temperature
        return 1.0
    return ends[0] if ends else fitted


def certain_fraction(max_probability: np.ndarray) -> float:
    """The share of items on which a model reports probability 1."""
    return float(np.mean(max_probability >= CERTAIN_ABOVE))


def confidence_gap_excess(mean_confidence: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """``|conf_a - conf_b| - disagreement(a, b)`` for every pair of models, shape (M, M).

    ``predictions`` is (M, n). A positive entry is a lower bound on how differently the two models
    are calibrated: their accuracies differ by at most their disagreement rate.
    """
    n_models = len(mean_confidence)
    predictions = compact_labels(predictions)
    excess = np.zeros((n_models, n_models))
    for a in range(n_models - 1):
        disagreement = np.mean(predictions[a] != predictions[a + 1 :], axis=1)
        gap = np.abs(mean_confidence[a] - mean_confidence[a + 1 :])
        excess[a, a + 1 :] = gap - disagreement
    return excess + excess.T


def pair_slack(n_items: int) -> float:
    """How far a gap may exceed the disagreement before it counts: 0.05, more on few items.

    Mean confidence estimates accuracy with a standard error of at most 1 / (2 sqrt(n)); 2 / sqrt(n)
    covers two models' noise with room to spare.
    """
    return max(0.05, 2.0 / np.sqrt(n_items))


def consensus_agreement(predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Each model's agreement with the majority vote of the other models, shape (M,).

    ``predictions`` is (M, n) class indices. Where the others' vote is tied between the model's
    class and c other classes, the model gets credit 1 / (1 + c). The majority of several models
    is usually more accurate than any one of them, so this is a label-free accuracy proxy that
    needs no calibration (Dhurandhar et al. 2024 rank LLMs from agreement likewise).
    """
    n_models, n = predictions.shape
    rows = np.arange(n)
    votes = np.zeros((n, n_classes), dtype=np.int64)
    for predicted in predictions:
        votes[rows, predicted] += 1
    top_two = -np.partition(-votes, 1, axis=1)[:, :2]
    agreement = np.empty(n_models)
    for m, predicted in enumerate(predictions):
        with_self = votes[rows, predicted]
        own = with_self - 1
        best_other = np.where(with_self == top_two[:, 0], top_two[:, 1], top_two[:, 0])
        tie = np.flatnonzero(own == best_other)
        # Other classes with as many of the others' votes as the model's class share the credit.
        tied = np.count_nonzero(votes[tie] == own[tie, None], axis=1)
        credit = np.count_nonzero(own > best_other) + np.sum(1.0 / (1.0 + tied))
        agreement[m] = credit / n
    return agreement


def compact_labels(predictions: np.ndarray) -> np.ndarray:
    """Class indices in the smallest integer type: pairwise comparisons move less memory."""
    top = int(predictions.max(initial=0))
    return predictions.astype(np.min_scalar_type(top), copy=False)

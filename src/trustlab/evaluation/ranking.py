"""Label-free ranking of models by their own uncertainty ("Ranked from Within", ICML 2025).

Given several models' outputs on the same unlabelled items, each model gets the mean of a
per-item uncertainty statistic of its softmax outputs, and the models are ranked by it, most
confident first. With labels, the ranking is checked against the ranking by accuracy with
Spearman's rho and Kendall's tau (the paper's evaluation). Every number comes with a paired
percentile bootstrap interval: the same resampled items for every model.

The bootstrap is vectorised: the per-item statistics are computed once, then each resample is a
vector of multiplicities (a bincount of uniform indices), and the resampled means of all models
are one matrix product ``counts @ statistics``, in chunks of resamples so memory stays bounded.

The method assumes models calibrated alike (as large models of one family are); across families
it ranks poorly. :func:`rank_models` reports the signs of that it can see, and can fit one
temperature per model on a small labelled slice first (see ``_calibration``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from trustlab._checks import (
    as_1d,
    as_float_array,
    check_choice,
    check_in_range,
    check_positive_int,
    check_random_state,
)
from trustlab.errors import InputError
from trustlab.evaluation import _calibration

__all__ = [
    "SCORES",
    "TOKEN_POSITIONS",
    "RankingResult",
    "TokenLogProbs",
    "item_scores",
    "rank_models",
    "spearman_rows",
    "kendall_rows",
]

SCORES = ("nll", "entropy", "max_prob", "margin")
TOKEN_POSITIONS = ("first", "key", "mean", "sum")
_LOWER_IS_CONFIDENT = {"nll": True, "entropy": True, "max_prob": False, "margin": False}
_SCORE_MEANING = {
    "nll": "mean negative log-probability of the predicted answer; lower = more confident",
    "entropy": "mean entropy of the predictive distribution in nats; lower = more confident",
    "max_prob": "mean probability of the predicted answer; higher = more confident",
    "margin": "mean gap between the two largest probabilities; higher = more confident",
}
# Rows of probabilities may be off by float32 rounding; anything further is not a distribution.
_ROW_SUM_TOLERANCE = 1e-4
# Resamples are drawn in chunks of at most this many indices (about 32 MB of int64 each).
_CHUNK_ELEMENTS = 4_000_000
# A model reporting probability 1 on this share of the items or more is warned about.
_CERTAIN_SHARE = 0.10
# With labels, a spread of (mean confidence - accuracy) across models above this is reported.
_GAP_SPREAD = 0.10
# The consensus check needs a majority of at least 3 other models; below this Spearman between
# the confidence ranking and the consensus-agreement ranking it adds a note. On the digits zoos,
# mixed families gave 0.23 to 0.37 and one-family zoos 0.52 to 0.92, except boosting models under
# shift (-0.24): too unreliable for a warning.
_CONSENSUS_MODELS = 4
_CONSENSUS_RHO = 0.4
# With labels, a correlation below this and differing calibration make a warning, not a note.
_POOR_RHO = 0.5


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
        lengths = np.array([len(s) for s in self.sequences])
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        flat = np.concatenate(self.sequences)
        if position == "first":
            return flat[starts]
        if position == "key":
            if self.key_positions is None:
                raise InputError.bad(
                    "token_position",
                    "'first', 'mean' or 'sum' without key_positions in TokenLogProbs",
                    position,
                )
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
            raise InputError.bad(f"sequences[{i}]", "log-probabilities (<= 0)", arr.max())
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
# Per-item statistics


def _check_class_output(value: Any, name: str, from_logits: bool) -> np.ndarray:
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
        raise InputError.bad(f"{name}[{where[0]}, {where[1]}]", "a probability (>= 0)", arr[where])
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


def _class_statistics(values: np.ndarray, is_logits: bool, score: str):
    """Per-item score, probability of the predicted class and the predicted class."""
    log_p = special.log_softmax(values, axis=1) if is_logits else None
    probs = np.exp(log_p) if is_logits else values
    predictions = np.argmax(probs, axis=1)
    max_prob = np.take_along_axis(probs, predictions[:, None], axis=1)[:, 0]
    if score == "nll":
        item = -log_p.max(axis=1) if is_logits else -np.log(max_prob)
    elif score == "entropy":
        item = -(probs * log_p).sum(axis=1) if is_logits else special.entr(probs).sum(axis=1)
    elif score == "max_prob":
        item = max_prob
    else:  # margin
        item = max_prob - np.partition(probs, -2, axis=1)[:, -2]
    return item, max_prob, predictions


def _token_statistics(tokens: TokenLogProbs, score: str, position: str) -> np.ndarray:
    if score not in ("nll", "max_prob"):
        raise InputError.bad(
            "score",
            "'nll' or 'max_prob' for TokenLogProbs outputs (entropy "
            "and margin need the full distribution: pass (n, K) "
            "probabilities over the answer options)",
            score,
        )
    log_likelihood = tokens.log_likelihood(position)
    # Under greedy decoding the emitted token is the most probable one: p(y_hat) = max p.
    return -log_likelihood if score == "nll" else np.exp(log_likelihood)


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
    if isinstance(output, TokenLogProbs):
        return _token_statistics(output, score, token_position)
    values = _check_class_output(output, "output", from_logits)
    return _class_statistics(values, from_logits, score)[0]


# ---------------------------------------------------------------------------------------------
# Rank correlations, row by row (one row per bootstrap resample)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho between ``x[b]`` and ``y[b]`` for every row ``b`` (average ranks for ties).

    NaN where a row is constant, as in :func:`scipy.stats.spearmanr`.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    rx = stats.rankdata(x, axis=1)
    ry = stats.rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denominator = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(axis=1) / denominator
    return np.where(denominator > 0, np.clip(rho, -1.0, 1.0), np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``x[b]`` and ``y[b]`` for every row ``b``, from all pairs.

    NaN where a row is constant, as in :func:`scipy.stats.kendalltau`. O(B M^2), chunked.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    first, second = np.triu_indices(x.shape[1], 1)
    out = np.empty(x.shape[0])
    step = max(1, _CHUNK_ELEMENTS // max(1, len(first)))
    for start in range(0, x.shape[0], step):
        rows = slice(start, start + step)
        sx = np.sign(x[rows, first] - x[rows, second])
        sy = np.sign(y[rows, first] - y[rows, second])
        untied = np.count_nonzero(sx, axis=1) * np.count_nonzero(sy, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (sx * sy).sum(axis=1) / np.sqrt(untied)
        out[rows] = np.where(untied > 0, np.clip(tau, -1.0, 1.0), np.nan)
    return out


# ---------------------------------------------------------------------------------------------
# Vectorised bootstrap


def _resample_counts(indices: np.ndarray) -> np.ndarray:
    """(R, n) multiplicities of each item in each resample, from (R, n) resample indices."""
    n_resamples, n = indices.shape
    offsets = (np.arange(n_resamples, dtype=np.int64) * n)[:, None]
    counts = np.bincount((indices + offsets).ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n)


def _resampled_means(values: np.ndarray, indices: np.ndarray, counts=None) -> np.ndarray:
    """Column means of ``values[indices[b]]`` for each row ``b`` of ``indices``, via counts.

    float32 ``values`` must hold integers (0/1 correctness): the products and partial sums are
    then integers below 2**24, exact in float32, and the product runs twice as fast.
    """
    counts = _resample_counts(indices) if counts is None else counts
    sums = counts.astype(values.dtype) @ values
    return sums.astype(np.float64) / values.shape[0]


def _bootstrap_index_chunks(n: int, n_bootstrap: int, rng: np.random.Generator):
    """Uniform resample indices, (chunk, n) at a time, at most _CHUNK_ELEMENTS per chunk."""
    step = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, n_bootstrap, step):
        yield rng.integers(0, n, size=(min(step, n_bootstrap - start), n))


def _bootstrap_means(blocks: list[np.ndarray], n_bootstrap: int, rng: np.random.Generator):
    """Per (n, C) block, the (n_bootstrap, C) resampled column means; one resample for all."""
    outs = [np.empty((n_bootstrap, block.shape[1])) for block in blocks]
    done = 0
    for indices in _bootstrap_index_chunks(len(blocks[0]), n_bootstrap, rng):
        counts = _resample_counts(indices)
        for out, block in zip(outs, blocks, strict=True):
            out[done : done + len(indices)] = _resampled_means(block, indices, counts)
        done += len(indices)
    return outs


def _percentile_interval(samples: np.ndarray, level: float) -> np.ndarray:
    """Percentile interval along axis 0 (NaN samples ignored), shape samples.shape[1:] + (2,)."""
    tail = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN, not noise
        bounds = np.nanquantile(samples, [tail, 1.0 - tail], axis=0)
    return np.moveaxis(bounds, 0, -1)


def _descending_ranks(confidence: np.ndarray) -> np.ndarray:
    """Rank 1 for the most confident model of each row; tied models share the best rank."""
    return stats.rankdata(-confidence, method="min", axis=-1).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Result


@dataclass(frozen=True, eq=False)
class RankingResult:
    """Models ranked by a label-free uncertainty score, optionally checked against accuracy.

    Arrays are indexed like ``models`` (the order of the input mapping). Intervals are percentile
    bootstrap intervals at ``confidence_level`` (None when ``n_bootstrap`` is 0).

    Attributes
    ----------
    models : tuple of str
    score : str
        The statistic: "nll", "entropy", "max_prob" or "margin".
    lower_is_confident : bool
        Whether a lower score means a more confident model (nll, entropy).
    scores, score_intervals : ndarray (M,), ndarray (M, 2) or None
        Mean per-item score of each model.
    predicted_ranking : tuple of str
        Most confident model first.
    ranks, rank_intervals : ndarray (M,) of int, ndarray (M, 2) or None
        Each model's place in the predicted ranking (1 = first) and its bootstrap range.
    mean_confidence, fraction_certain : ndarray (M,)
        Mean probability of the predicted class and the share of items where it is 1 (NaN for
        TokenLogProbs models, which give no distribution).
    temperatures : dict or None
        The temperature fitted per model when a labelled calibration slice was used.
    warnings : tuple of str
        The calibration caveat when the data show that the ranking is unreliable: models that
        report probability 1 on many items; with labels, differing calibration together with a
        Spearman rho below 0.5.
    notes : tuple of str
        Signs that are not proof by themselves: pairs of models whose mean confidences differ
        by more than their accuracies can (by their disagreement rate), so their calibration
        differs; a confidence ranking that disagrees with the ranking by agreement with the
        other models' majority vote (Spearman below 0.4, with 4 or more class models); with
        labels, the spread of mean confidence minus accuracy.
    consensus_agreement, consensus_spearman : ndarray (M,), float or None
        Each model's agreement with the majority vote of the other models (NaN for
        TokenLogProbs models, or with fewer than 4 class models), and its Spearman correlation
        with the confidence.
    accuracy, accuracy_intervals, true_ranking, calibration_gap : with labels only
        ``calibration_gap`` is mean confidence minus accuracy.
    spearman, spearman_interval, kendall, kendall_interval : with labels only
        Rank correlation between confidence and accuracy (+1: the ranking is right).
    """

    models: tuple[str, ...]
    score: str
    lower_is_confident: bool
    scores: np.ndarray
    score_intervals: np.ndarray | None
    predicted_ranking: tuple[str, ...]
    ranks: np.ndarray
    rank_intervals: np.ndarray | None
    mean_confidence: np.ndarray
    fraction_certain: np.ndarray
    n_items: int
    n_bootstrap: int
    confidence_level: float
    token_position: str | None = None
    temperatures: dict[str, float] | None = None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    consensus_agreement: np.ndarray | None = None
    consensus_spearman: float | None = None
    accuracy: np.ndarray | None = None
    accuracy_intervals: np.ndarray | None = None
    true_ranking: tuple[str, ...] | None = None
    calibration_gap: np.ndarray | None = None
    spearman: float | None = None
    spearman_interval: tuple[float, float] | None = None
    kendall: float | None = None
    kendall_interval: tuple[float, float] | None = None

    @property
    def has_labels(self) -> bool:
        return self.accuracy is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: plain floats, ints, strings and lists; NaN becomes None."""
        per_model = []
        for m, name in enumerate(self.models):
            row = {
                "name": name,
                "score": _plain(self.scores[m]),
                "score_interval": _plain(self.score_intervals, m),
                "rank": int(self.ranks[m]),
                "rank_interval": _plain(self.rank_intervals, m, as_int=True),
                "mean_confidence": _plain(self.mean_confidence[m]),
                "fraction_certain": _plain(self.fraction_certain[m]),
                "temperature": None if self.temperatures is None else self.temperatures[name],
                "consensus_agreement": _plain(self.consensus_agreement, m),
            }
            if self.has_labels:
                row["accuracy"] = _plain(self.accuracy[m])
                row["accuracy_interval"] = _plain(self.accuracy_intervals, m)
                row["calibration_gap"] = _plain(self.calibration_gap, m)
            per_model.append(row)
        out = {
            "score": self.score,
            "lower_is_confident": self.lower_is_confident,
            "n_items": self.n_items,
            "n_bootstrap": self.n_bootstrap,
            "confidence_level": self.confidence_level,
            "token_position": self.token_position,
            "predicted_ranking": list(self.predicted_ranking),
            "models": per_model,
            "consensus_spearman": _plain(self.consensus_spearman),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }
        if self.has_labels:
            out["true_ranking"] = list(self.true_ranking)
            out["spearman"] = {
                "value": _plain(self.spearman),
                "interval": _plain(self.spearman_interval),
            }
            out["kendall"] = {
                "value": _plain(self.kendall),
                "interval": _plain(self.kendall_interval),
            }
        return out

    def summary(self) -> str:
        """The ranking as a small text table, the correlations and the warnings."""
        pct = f"{self.confidence_level:.0%}"
        lines = [
            f"Label-free ranking of {len(self.models)} models on {self.n_items} items by "
            f"{self.score} ({_SCORE_MEANING[self.score]})",
        ]
        if self.temperatures is not None:
            lines.append("after temperature scaling on a labelled slice")
        header = f"{'rank':>4}  {'model':<24} {'score':>9} {pct + ' interval':>20}"
        if self.has_labels:
            header += f" {'accuracy':>9} {pct + ' interval':>18} {'conf-acc':>8}"
        lines.append(header)
        for m in np.argsort(self.ranks, kind="stable"):
            line = (
                f"{self.ranks[m]:>4}  {self.models[m][:24]:<24} {self.scores[m]:>9.4f} "
                f"{_interval_text(self.score_intervals, m):>20}"
            )
            if self.has_labels:
                gap = np.nan if self.calibration_gap is None else self.calibration_gap[m]
                line += (
                    f" {self.accuracy[m]:>9.4f} {_interval_text(self.accuracy_intervals, m):>18}"
                    f" {gap:>+8.3f}"
                )
            lines.append(line)
        if self.has_labels:
            lines.append(f"true ranking: {', '.join(self.true_ranking)}")
            lines.append(
                f"Spearman rho = {_fmt(self.spearman)} {_pair_text(self.spearman_interval)}, "
                f"Kendall tau = {_fmt(self.kendall)} {_pair_text(self.kendall_interval)}"
            )
        if self.consensus_spearman is not None:
            lines.append(
                "Spearman rho between confidence and agreement with the other models' majority: "
                f"{_fmt(self.consensus_spearman)}"
            )
        lines.extend(f"warning: {text}" for text in self.warnings)
        lines.extend(f"note: {text}" for text in self.notes)
        return "\n".join(lines)

    def plot(self, ax=None):
        """Score against accuracy with bootstrap intervals (with labels), else scores by rank."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.0, 4.0))
        if self.has_labels:
            self._plot_against_accuracy(ax)
        else:
            self._plot_scores(ax)
        return ax

    def _plot_against_accuracy(self, ax) -> None:
        ax.errorbar(
            self.accuracy,
            self.scores,
            xerr=_error_bars(self.accuracy, self.accuracy_intervals),
            yerr=_error_bars(self.scores, self.score_intervals),
            fmt="o",
            capsize=3,
        )
        for m, name in enumerate(self.models):
            ax.annotate(
                name,
                (self.accuracy[m], self.scores[m]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
            )
        ax.set_xlabel("accuracy (with labels)")
        ax.set_ylabel(f"{self.score} (label-free; more confident up)")
        if self.lower_is_confident:  # a right ranking then rises from left to right
            ax.invert_yaxis()
        ax.set_title(f"Spearman rho = {_fmt(self.spearman)}, Kendall tau = {_fmt(self.kendall)}")

    def _plot_scores(self, ax) -> None:
        order = np.argsort(self.ranks, kind="stable")
        positions = np.arange(len(order))
        intervals = None if self.score_intervals is None else self.score_intervals[order]
        ax.errorbar(
            self.scores[order],
            positions,
            xerr=_error_bars(self.scores[order], intervals),
            fmt="o",
            capsize=3,
        )
        ax.set_yticks(positions, [self.models[m] for m in order])
        ax.invert_yaxis()
        direction = "lower" if self.lower_is_confident else "higher"
        ax.set_xlabel(f"{self.score} (label-free; {direction} = more confident)")
        ax.set_title("Predicted ranking, most confident first")


def _plain(value, index=None, as_int: bool = False):
    """A JSON-safe copy: floats (NaN to None), ints, or lists of them."""
    if value is None:
        return None
    if index is not None:
        value = value[index]
    if isinstance(value, (tuple, list, np.ndarray)):
        return [_plain(v, as_int=as_int) for v in np.asarray(value).tolist()]
    value = float(value)
    if value != value:
        return None
    return int(value) if as_int else value


def _fmt(value) -> str:
    return "nan" if value is None or value != value else f"{value:.3f}"


def _pair_text(pair) -> str:
    return "" if pair is None else f"[{_fmt(pair[0])}, {_fmt(pair[1])}]"


def _interval_text(intervals, m) -> str:
    return "" if intervals is None else f"[{intervals[m, 0]:.4f}, {intervals[m, 1]:.4f}]"


def _error_bars(centre: np.ndarray, intervals: np.ndarray | None):
    if intervals is None:
        return None
    return np.vstack([centre - intervals[:, 0], intervals[:, 1] - centre]).clip(min=0.0)


# ---------------------------------------------------------------------------------------------
# Input validation


def _check_outputs(outputs: Any, from_logits: bool, argument: str = "outputs"):
    """Names and validated outputs: (n, K) arrays or TokenLogProbs, the same n and K for all."""
    if not isinstance(outputs, Mapping):
        raise InputError.bad(argument, "a mapping of model names to outputs", outputs)
    if len(outputs) < 2:
        raise InputError.bad(argument, "at least 2 models to rank", f"{len(outputs)} model(s)")
    names = tuple(str(name) for name in outputs)
    if len(set(names)) != len(names):
        raise InputError.bad(argument, "distinct model names", list(names))
    checked = []
    for key, value in outputs.items():
        name = f"{argument}[{key!r}]"
        if isinstance(value, TokenLogProbs):
            checked.append(value)
        else:
            checked.append(_check_class_output(value, name, from_logits))
    _check_shapes(names, checked, argument)
    return names, checked


def _check_shapes(names, checked, argument: str) -> None:
    lengths = {name: len(value) for name, value in zip(names, checked, strict=True)}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k}: {v}" for k, v in lengths.items())
        raise InputError(
            f"{argument}: expected the same number of items for every model, got {desc}",
            argument=argument,
        )
    if next(iter(lengths.values())) < 2:
        raise InputError.bad(argument, "at least 2 items per model", "1 item")
    widths = {
        name: v.shape[1]
        for name, v in zip(names, checked, strict=True)
        if isinstance(v, np.ndarray)
    }
    if len(set(widths.values())) > 1:
        desc = ", ".join(f"{k}: {v}" for k, v in widths.items())
        raise InputError(
            f"{argument}: expected the same number of classes for every model, got {desc}",
            argument=argument,
        )


def _label_index(labels: Any, classes: Any, n_classes: int, argument: str) -> np.ndarray:
    """Column indices of ``labels``: through ``classes`` if given, else labels are 0..K-1."""
    arr = as_1d(labels, argument)
    if classes is None:
        if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and (arr % 1 != 0).any()):
            raise InputError.bad(
                argument,
                f"class indices 0..{n_classes - 1} (or pass classes= "
                "naming the class of each column)",
                arr,
            )
        index = arr.astype(np.int64)
        outside = (index < 0) | (index >= n_classes)
        if outside.any():
            i = int(np.argmax(outside))
            raise InputError.bad(
                f"{argument}[{i}]", f"a class index in [0, {n_classes})", arr[i].item()
            )
        return index
    class_list = as_1d(classes, "classes").tolist()
    if len(class_list) != n_classes or len(set(class_list)) != n_classes:
        raise InputError.bad(
            "classes", f"{n_classes} distinct class labels, one per column", class_list
        )
    lookup = {c: i for i, c in enumerate(class_list)}
    unknown = [v for v in dict.fromkeys(arr.tolist()) if v not in lookup]
    if unknown:
        raise InputError.bad(argument, f"values among classes={class_list!r}", unknown[:5])
    return np.array([lookup[v] for v in arr.tolist()], dtype=np.int64)


def _check_correct(correct: Any, names: tuple[str, ...], n: int) -> np.ndarray:
    """(n, M) 0/1 correctness from a mapping of model names to per-item correctness."""
    if not isinstance(correct, Mapping) or set(map(str, correct)) != set(names):
        raise InputError.bad(
            "correct", f"a mapping with one entry per model {list(names)}", correct
        )
    by_name = {str(k): v for k, v in correct.items()}
    columns = []
    for name in names:
        arr = as_1d(by_name[name], f"correct[{name!r}]")
        values = arr.astype(np.float64) if arr.dtype.kind in "biuf" else None
        if values is None or len(values) != n or not np.isin(values, (0.0, 1.0)).all():
            raise InputError.bad(f"correct[{name!r}]", f"{n} values that are 0/1 or booleans", arr)
        columns.append(values)
    return np.column_stack(columns)


# ---------------------------------------------------------------------------------------------
# Temperature scaling


def _calibrated(checked, names, from_logits, fit_logits, fit_labels) -> tuple[list, dict]:
    """Each class model's outputs as tempered logits, and the fitted temperatures."""
    tempered, temperatures = [], {}
    for name, values, fit in zip(names, checked, fit_logits, strict=True):
        logits = values if from_logits else _calibration.logits_from_probabilities(values)
        fit = fit if from_logits else _calibration.logits_from_probabilities(fit)
        temperature = _calibration.fit_temperature(fit, fit_labels)
        temperatures[name] = temperature
        tempered.append(logits / temperature)
    return tempered, temperatures


def _require_class_models(checked, option: str) -> None:
    if any(isinstance(v, TokenLogProbs) for v in checked):
        raise InputError.bad(
            option,
            "class-probability outputs for every model (TokenLogProbs "
            "hold no distribution to rescale or to predict from)",
            "TokenLogProbs outputs",
        )


# ---------------------------------------------------------------------------------------------
# Caveat


def _caveat(names, stats_, confidence, n, accuracy, spearman) -> dict[str, Any]:
    """The calibration caveat: warnings, notes and the consensus agreement.

    Warnings say the ranking itself is unreliable; notes are signs that do not by themselves
    break a ranking (less-trained models of one family are often under-confident and less
    accurate, and still rank right; a zoo of many similar weak models misleads the consensus).
    """
    warned, notes = [], []
    certain = [
        (names[m], stats_.fraction_certain[m])
        for m in stats_.class_ids
        if stats_.fraction_certain[m] >= _CERTAIN_SHARE
    ]
    if certain:
        listed = ", ".join(f"{name} ({share:.0%})" for name, share in certain)
        warned.append(
            f"models report probability 1 on many items: {listed}; their confidence "
            "says little about their accuracy"
        )
    agreement = np.full(len(names), np.nan)
    consensus = None
    ids = stats_.class_ids
    if len(ids) >= _CONSENSUS_MODELS:
        agreement[ids] = _calibration.consensus_agreement(stats_.predictions, stats_.n_classes)
        consensus = float(spearman_rows(confidence[ids], agreement[ids])[0])
        if not consensus >= _CONSENSUS_RHO:  # NaN (a constant ranking) counts too
            notes.append(
                "the ranking by confidence disagrees with the ranking by agreement with the "
                f"other models' majority vote (Spearman {consensus:.2f}): either the models are "
                "calibrated differently, or the majority is not more accurate than its members "
                "(many similar, weak models)"
            )
    if len(ids) >= 2:
        notes.extend(
            _pairwise_note(
                [names[m] for m in ids], stats_.mean_confidence[ids], stats_.predictions, n
            )
        )
    if accuracy is not None and len(ids) == len(names):
        gap = stats_.mean_confidence - accuracy
        if np.ptp(gap) > _GAP_SPREAD:
            low, high = int(np.argmin(gap)), int(np.argmax(gap))
            fact = (
                f"mean confidence minus accuracy ranges from {gap[low]:+.3f} ({names[low]}) "
                f"to {gap[high]:+.3f} ({names[high]})"
            )
            if spearman is not None and spearman < _POOR_RHO:  # NaN (equal accuracies): a note
                warned.append(
                    f"{fact}, and the label-free ranking agrees poorly with accuracy "
                    f"(Spearman {_fmt(spearman)})"
                )
            else:
                notes.append(fact)
    if warned:
        warned.append(
            "models calibrated differently (e.g. of different families) rank poorly "
            "without labels; fit temperatures on a small labelled slice "
            "(calibration_outputs/calibration_labels or calibration_size)"
        )
    return dict(
        warnings=tuple(warned),
        notes=tuple(notes),
        consensus_agreement=agreement,
        consensus_spearman=consensus,
    )


def _pairwise_note(names, mean_confidence, predictions, n) -> list[str]:
    excess = _calibration.confidence_gap_excess(mean_confidence, predictions)
    flagged = np.argwhere(np.triu(excess > _calibration.pair_slack(n), 1))
    if not len(flagged):
        return []
    a, b = np.unravel_index(np.argmax(np.triu(excess, 1)), excess.shape)
    gap = abs(mean_confidence[a] - mean_confidence[b])
    return [
        f"{len(flagged)} model pair(s) differ in mean confidence by more than their "
        f"accuracies can: e.g. {names[a]} and {names[b]} differ by {gap:.3f} but disagree "
        f"on only {gap - excess[a, b]:.3f} of the items, so their calibration differs by at "
        f"least {excess[a, b]:.3f}"
    ]


# ---------------------------------------------------------------------------------------------
# Public entry point


def rank_models(
    outputs: Mapping[str, Any],
    *,
    score: str = "nll",
    from_logits: bool = False,
    labels: Any = None,
    classes: Sequence[Any] | None = None,
    correct: Mapping[str, Any] | None = None,
    token_position: str = "mean",
    calibration_outputs: Mapping[str, Any] | None = None,
    calibration_labels: Any = None,
    calibration_size: int | None = None,
    n_bootstrap: int = 1000,
    confidence_level: float = 0.95,
    random_state: Any = None,
) -> RankingResult:
    """Rank models on unlabelled items by their own uncertainty, most confident first.

    Each model's score is the mean over items of a softmax uncertainty statistic; models are
    ranked by it (Tu et al., "Ranked from Within", ICML 2025). With ``labels`` (or ``correct``),
    the ranking is compared with the ranking by accuracy through Spearman's rho and Kendall's
    tau-b. All intervals come from one paired percentile bootstrap over items.

    Parameters
    ----------
    outputs : mapping of str to array-like (n, K) or TokenLogProbs
        Per model, its class probabilities (rows summing to 1), or logits with
        ``from_logits=True``, on the same n items; or :class:`TokenLogProbs` for a generative
        model's answer tokens. At least 2 models.
    score : {"nll", "entropy", "max_prob", "margin"}
        The per-item statistic (see :func:`item_scores`); "nll" is the paper's recommendation.
    from_logits : bool
        The 2-D outputs (and calibration outputs) are logits, e.g. an LLM's log-probabilities of
        the option letters.
    labels : array-like (n,), optional
        True classes: column indices 0..K-1, or values of ``classes``.
    classes : sequence, optional
        The class of each column, when ``labels`` are not column indices.
    correct : mapping of str to array-like (n,) of 0/1, optional
        Instead of ``labels``: whether each model answered each item right (e.g. graded
        generative answers).
    token_position : {"first", "key", "mean", "sum"}
        Which answer tokens of TokenLogProbs outputs are scored.
    calibration_outputs, calibration_labels : optional
        A small labelled slice (outputs of every model, labels) on which one temperature per
        model is fitted by minimising the NLL before ranking.
    calibration_size : int, optional
        With ``labels``: fit the temperatures on this many randomly drawn labelled items, then
        rank and evaluate on the other items.
    n_bootstrap : int
        Bootstrap resamples of the items (0: no intervals).
    confidence_level : float
        Coverage of the percentile intervals.
    random_state : None, int or numpy Generator

    Returns
    -------
    RankingResult

    Raises
    ------
    InputError
        Fewer than 2 models or 2 items; outputs of different n or K; rows that are not
        probability distributions (unless ``from_logits``); NaN or infinity; labels outside the
        classes; options that do not fit together (e.g. ``calibration_size`` without labels).

    Notes
    -----
    Probability rows are renormalised (they may be off by up to 1e-4). Temperatures are searched
    in [0.01, 100], and for probability inputs zeros are floored at 1e-12 first, so a model that
    reports probability 1 can still be softened. Tied models share the better rank. See
    :class:`RankingResult` for the calibration warnings and notes.

    Examples
    --------
    >>> import numpy as np
    >>> sharp = np.array([[0.9, 0.1], [0.2, 0.8], [0.95, 0.05]])
    >>> vague = np.array([[0.6, 0.4], [0.5, 0.5], [0.45, 0.55]])
    >>> result = rank_models({"vague": vague, "sharp": sharp}, n_bootstrap=200, random_state=0)
    >>> result.predicted_ranking
    ('sharp', 'vague')
    >>> rank_models({"vague": vague, "sharp": sharp}, labels=[0, 1, 0],
    ...             n_bootstrap=0).spearman
    1.0
    """
    check_choice(score, "score", SCORES)
    check_choice(token_position, "token_position", TOKEN_POSITIONS)
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap", minimum=0)
    level = check_in_range(
        confidence_level, "confidence_level", 0.0, 1.0, low_open=True, high_open=True
    )
    rng = check_random_state(random_state)
    names, checked = _check_outputs(outputs, from_logits)
    label_index, correctness = _check_truth(checked, names, labels, classes, correct)

    temperatures = None
    if calibration_size is not None:
        if calibration_outputs is not None or calibration_labels is not None:
            raise InputError.bad(
                "calibration_size", "None when calibration_outputs are given", calibration_size
            )
        checked, label_index, correctness, temperatures = _fit_on_random_slice(
            checked, names, from_logits, label_index, correctness, calibration_size, rng
        )
    elif calibration_outputs is not None or calibration_labels is not None:
        checked, temperatures = _fit_on_given_slice(
            checked, names, from_logits, classes, calibration_outputs, calibration_labels
        )
    is_logits = from_logits or temperatures is not None
    return _rank(
        names,
        checked,
        is_logits,
        score,
        token_position,
        label_index,
        correctness,
        temperatures,
        n_bootstrap,
        level,
        rng,
    )


def _check_truth(checked, names, labels, classes, correct):
    """Label column indices (n,) or None, and correctness (n, M) from ``correct`` or None."""
    if labels is not None and correct is not None:
        raise InputError.bad(
            "correct", "None when labels are given (pass one or the other)", correct
        )
    n = len(checked[0])
    if labels is None:
        return None, None if correct is None else _check_correct(correct, names, n)
    _require_class_models(checked, "labels")
    label_index = _label_index(labels, classes, checked[0].shape[1], "labels")
    if len(label_index) != n:
        raise InputError.bad("labels", f"{n} labels (one per item)", label_index)
    return label_index, None


def _fit_on_random_slice(checked, names, from_logits, label_index, correctness, size, rng):
    """Temperatures fitted on ``size`` random labelled items; the rest are returned for ranking."""
    if label_index is None:
        raise InputError.bad("labels", "the true labels when calibration_size is given", None)
    n = len(checked[0])
    size = check_positive_int(size, "calibration_size", minimum=2)
    if size > n - 2:
        raise InputError.bad("calibration_size", f"at most {n - 2} (n items - 2)", size)
    fit_rows = rng.choice(n, size=size, replace=False)
    keep = np.setdiff1d(np.arange(n), fit_rows)
    tempered, temperatures = _calibrated(
        checked, names, from_logits, [v[fit_rows] for v in checked], label_index[fit_rows]
    )
    rest = None if correctness is None else correctness[keep]
    return [v[keep] for v in tempered], label_index[keep], rest, temperatures


def _fit_on_given_slice(checked, names, from_logits, classes, calibration_outputs, labels):
    """Temperatures fitted on a separate labelled slice of every model's outputs."""
    if calibration_outputs is None or labels is None:
        raise InputError.bad(
            "calibration_labels",
            "both calibration_outputs and calibration_labels, or neither",
            "only one of them",
        )
    _require_class_models(checked, "calibration_outputs")
    n_classes = checked[0].shape[1]
    cal_names, cal_checked = _check_outputs(calibration_outputs, from_logits, "calibration_outputs")
    if set(cal_names) != set(names) or any(
        isinstance(v, TokenLogProbs) or v.shape[1] != n_classes for v in cal_checked
    ):
        raise InputError.bad(
            "calibration_outputs",
            f"(n_cal, {n_classes}) outputs of each of the models {list(names)}",
            list(cal_names),
        )
    by_name = dict(zip(cal_names, cal_checked, strict=True))
    cal_index = _label_index(labels, classes, n_classes, "calibration_labels")
    if len(cal_index) != len(cal_checked[0]):
        raise InputError.bad(
            "calibration_labels",
            f"{len(cal_checked[0])} labels (one per calibration item)",
            cal_index,
        )
    return _calibrated(checked, names, from_logits, [by_name[k] for k in names], cal_index)


@dataclass(frozen=True)
class _ItemStatistics:
    """Per-item scores of all models, and what the class-probability models predict."""

    item: np.ndarray  # (n, M)
    mean_confidence: np.ndarray  # (M,), NaN for TokenLogProbs models
    fraction_certain: np.ndarray  # (M,), likewise
    class_ids: np.ndarray  # the models with class outputs
    predictions: np.ndarray  # (len(class_ids), n)
    n_classes: int


def _item_statistics(checked, is_logits, score, token_position) -> _ItemStatistics:
    n, n_models = len(checked[0]), len(checked)
    item = np.empty((n, n_models))
    mean_confidence = np.full(n_models, np.nan)
    fraction_certain = np.full(n_models, np.nan)
    class_ids, predictions = [], []
    for m, values in enumerate(checked):
        if isinstance(values, TokenLogProbs):
            item[:, m] = _token_statistics(values, score, token_position)
            continue
        item[:, m], max_prob, predicted = _class_statistics(values, is_logits, score)
        mean_confidence[m] = max_prob.mean()
        fraction_certain[m] = _calibration.certain_fraction(max_prob)
        class_ids.append(m)
        predictions.append(predicted)
    return _ItemStatistics(
        item=item,
        mean_confidence=mean_confidence,
        fraction_certain=fraction_certain,
        class_ids=np.array(class_ids, dtype=np.int64),
        predictions=np.array(predictions, dtype=np.int64).reshape(len(class_ids), n),
        n_classes=next((v.shape[1] for v in checked if isinstance(v, np.ndarray)), 0),
    )


def _rank(
    names,
    checked,
    is_logits,
    score,
    token_position,
    label_index,
    correctness,
    temperatures,
    n_bootstrap,
    level,
    rng,
) -> RankingResult:
    stats_ = _item_statistics(checked, is_logits, score, token_position)
    n, n_models = stats_.item.shape
    if label_index is not None:
        correctness = (stats_.predictions == label_index).T
    sign = -1.0 if _LOWER_IS_CONFIDENT[score] else 1.0
    scores = stats_.item.mean(axis=0)
    ranks = _descending_ranks(sign * scores)
    boot = None
    if n_bootstrap:
        blocks = [stats_.item]
        if correctness is not None:
            exact_in_float32 = n < 2**24  # 0/1 sums stay exact integers in float32
            blocks.append(correctness.astype(np.float32 if exact_in_float32 else np.float64))
        boot = np.hstack(_bootstrap_means(blocks, n_bootstrap, rng))
    fields: dict[str, Any] = dict(
        models=names,
        score=score,
        lower_is_confident=_LOWER_IS_CONFIDENT[score],
        scores=scores,
        score_intervals=None if boot is None else _percentile_interval(boot[:, :n_models], level),
        predicted_ranking=tuple(names[m] for m in np.lexsort((np.arange(n_models), ranks))),
        ranks=ranks,
        rank_intervals=None if boot is None else _rank_interval(sign * boot[:, :n_models], level),
        mean_confidence=stats_.mean_confidence,
        fraction_certain=stats_.fraction_certain,
        n_items=n,
        n_bootstrap=n_bootstrap,
        confidence_level=level,
        token_position=token_position if len(stats_.class_ids) < n_models else None,
        temperatures=temperatures,
    )
    if correctness is not None:
        fields.update(_evaluation(names, sign, scores, correctness, boot, level))
        if len(stats_.class_ids) == n_models:
            fields["calibration_gap"] = stats_.mean_confidence - fields["accuracy"]
    fields.update(
        _caveat(names, stats_, sign * scores, n, fields.get("accuracy"), fields.get("spearman"))
    )
    return RankingResult(**fields)


def _rank_interval(confidence_samples: np.ndarray, level: float) -> np.ndarray:
    ranks = _descending_ranks(confidence_samples)
    tail = (1.0 - level) / 2.0
    low = np.quantile(ranks, tail, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="higher")
    return np.column_stack([low, high]).astype(np.int64)


def _evaluation(names, sign, scores, correctness, boot, level) -> dict[str, Any]:
    """Accuracy, the true ranking and the rank correlations with their intervals.

    ``sign * scores`` is the confidence (+1 correlation: the label-free ranking is right).
    """
    n_models = len(names)
    accuracy = correctness.mean(axis=0)
    true_order = np.lexsort((np.arange(n_models), -accuracy))
    out: dict[str, Any] = dict(
        accuracy=accuracy,
        true_ranking=tuple(names[m] for m in true_order),
        spearman=float(spearman_rows(sign * scores, accuracy)[0]),
        kendall=float(kendall_rows(sign * scores, accuracy)[0]),
    )
    if boot is not None:
        confidence, boot_accuracy = sign * boot[:, :n_models], boot[:, n_models:]
        out["accuracy_intervals"] = _percentile_interval(boot_accuracy, level)
        out["spearman_interval"] = _interval_pair(spearman_rows(confidence, boot_accuracy), level)
        out["kendall_interval"] = _interval_pair(kendall_rows(confidence, boot_accuracy), level)
    return out


def _interval_pair(samples: np.ndarray, level: float) -> tuple[float, float]:
    low, high = _percentile_interval(samples, level)
    return float(low), float(high)

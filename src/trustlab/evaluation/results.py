"""The result of a label-free ranking: :class:`RankingResult`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from trustlab._results import Result, new_axes
from trustlab.evaluation.scores import SCORE_MEANING

__all__ = ["RankingResult"]


@dataclass(frozen=True, eq=False)
class RankingResult(Result):
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
        labels, the spread of mean confidence minus accuracy; after temperature scaling, a
        temperature fitted at an end of the search (the labelled slice did not bound it).
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

    figure_name: ClassVar[str] = "ranking.png"

    @property
    def has_labels(self) -> bool:
        return self.accuracy is not None

    def _dict_items(self) -> dict[str, Any]:
        """One entry per model under "models"; with labels, the correlations with intervals."""
        out = {
            "score": self.score,
            "lower_is_confident": self.lower_is_confident,
            "n_items": self.n_items,
            "n_bootstrap": self.n_bootstrap,
            "confidence_level": self.confidence_level,
            "token_position": self.token_position,
            "predicted_ranking": self.predicted_ranking,
            "models": [self._model_items(m) for m in range(len(self.models))],
            "consensus_spearman": self.consensus_spearman,
            "warnings": self.warnings,
            "notes": self.notes,
        }
        if self.has_labels:
            out["true_ranking"] = self.true_ranking
            out["spearman"] = {"value": self.spearman, "interval": self.spearman_interval}
            out["kendall"] = {"value": self.kendall, "interval": self.kendall_interval}
        return out

    def _model_items(self, m: int) -> dict[str, Any]:
        name = self.models[m]
        row = {
            "name": name,
            "score": self.scores[m],
            "score_interval": _row(self.score_intervals, m),
            "rank": self.ranks[m],
            "rank_interval": _row(self.rank_intervals, m),
            "mean_confidence": self.mean_confidence[m],
            "fraction_certain": self.fraction_certain[m],
            "temperature": None if self.temperatures is None else self.temperatures[name],
            "consensus_agreement": _row(self.consensus_agreement, m),
        }
        if self.has_labels:
            row["accuracy"] = self.accuracy[m]
            row["accuracy_interval"] = _row(self.accuracy_intervals, m)
            row["calibration_gap"] = _row(self.calibration_gap, m)
        return row

    def summary(self) -> str:
        """The ranking as a small text table, the correlations and the warnings."""
        pct = f"{self.confidence_level:.0%}"
        lines = [
            f"Label-free ranking of {len(self.models)} models on {self.n_items} items by "
            f"{self.score} ({SCORE_MEANING[self.score]})",
        ]
        if self.temperatures is not None:
            lines.append("after temperature scaling on a labelled slice")
        width = max(24, *(len(name) for name in self.models))  # whole names: never cut
        header = f"{'rank':>4}  {'model':<{width}} {'score':>9} {pct + ' interval':>20}"
        if self.has_labels:
            header += f" {'accuracy':>9} {pct + ' interval':>18} {'conf-acc':>8}"
        lines.append(header)
        for m in np.argsort(self.ranks, kind="stable"):
            line = (
                f"{self.ranks[m]:>4}  {self.models[m]:<{width}} {self.scores[m]:>9.4f} "
                f"{_interval_text(self.score_intervals, m):>20}"
            )
            if self.has_labels:
                # no confidence-accuracy gap for token log-probabilities (not a probability)
                gap = "n/a" if self.calibration_gap is None else f"{self.calibration_gap[m]:+.3f}"
                line += (
                    f" {self.accuracy[m]:>9.4f} {_interval_text(self.accuracy_intervals, m):>18}"
                    f" {gap:>8}"
                )
            lines.append(line)
        if self.has_labels:
            lines.append(f"true ranking: {self._true_ranking_text()}")
            if np.isnan(self.spearman) or np.isnan(self.kendall):
                lines.append(
                    "Spearman rho and Kendall tau: not defined (the models' accuracies, or their "
                    "scores, are all equal)"
                )
            else:
                lines.append(
                    f"Spearman rho = {_fmt(self.spearman)}{_pair_text(self.spearman_interval)}, "
                    f"Kendall tau = {_fmt(self.kendall)}{_pair_text(self.kendall_interval)}"
                )
        if self.consensus_spearman is not None:
            lines.append(
                "Spearman rho between confidence and agreement with the other models' majority: "
                f"{_fmt(self.consensus_spearman)}"
            )
        lines.extend(f"warning: {text}" for text in self.warnings)
        lines.extend(f"note: {text}" for text in self.notes)
        return "\n".join(lines)

    def _true_ranking_text(self) -> str:
        """The models by accuracy, most accurate first; models of equal accuracy joined by "=".

        (``true_ranking`` lists tied models in their input order; printed with commas only,
        that order read as a ranking the accuracies do not make.)
        """
        accuracy = dict(zip(self.models, self.accuracy, strict=True))
        text = self.true_ranking[0]
        for before, name in itertools.pairwise(self.true_ranking):
            text += (" = " if accuracy[name] == accuracy[before] else ", ") + name
        return text

    def plot(self, ax=None):
        """Score against accuracy with bootstrap intervals (with labels), else scores by rank."""
        ax = new_axes(ax, figsize=(6.0, 4.0))
        if self.has_labels:
            self._plot_against_accuracy(ax)
        else:
            self._plot_scores(ax)
        missing = [
            name for name, s in zip(self.models, self.scores, strict=True) if not np.isfinite(s)
        ]
        if missing:  # no point to draw (an overflowed summed NLL): said, not dropped silently
            ax.text(
                0.01,
                0.01,
                f"not drawn (score not finite): {', '.join(missing)}",
                transform=ax.transAxes,
                fontsize=8,
                va="bottom",
            )
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


def _row(values, m: int):
    """``values[m]``, or None when the whole array is absent."""
    return None if values is None else values[m]


def _fmt(value) -> str:
    return "nan" if value is None or value != value else f"{value:.3f}"


def _pair_text(pair) -> str:
    return "" if pair is None else f" [{_fmt(pair[0])}, {_fmt(pair[1])}]"


def _interval_text(intervals, m) -> str:
    return "" if intervals is None else f"[{intervals[m, 0]:.4f}, {intervals[m, 1]:.4f}]"


def _error_bars(centre: np.ndarray, intervals: np.ndarray | None):
    """Error bar lengths below and above ``centre``; none (0) where one is not finite (an
    infinite score, or an interval's infinite end, has no bar to draw)."""
    if intervals is None:
        return None
    with np.errstate(invalid="ignore"):  # inf - inf: an infinite score's own interval
        bars = np.vstack([centre - intervals[:, 0], intervals[:, 1] - centre])
    return np.where(np.isfinite(bars), bars, 0.0).clip(min=0.0)

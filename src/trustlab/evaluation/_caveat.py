"""The calibration caveat of a label-free ranking: warnings, notes and the consensus check.

Ranking by confidence assumes models calibrated alike. Warnings say the ranking itself is
unreliable; notes are signs that do not by themselves break a ranking (less-trained models of one
family are often under-confident and less accurate, and still rank right; a zoo of many similar
weak models misleads the consensus). The diagnostics themselves are in ``_calibration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trustlab.evaluation import _calibration
from trustlab.evaluation._correlation import spearman_rows

# A model reporting probability 1 on this share of the items or more is warned about.
CERTAIN_SHARE = 0.10
# With labels, a spread of (mean confidence - accuracy) across models above this is reported.
GAP_SPREAD = 0.10
# The consensus check needs a majority of at least 3 other models; below CONSENSUS_RHO (Spearman
# between the confidence ranking and the consensus-agreement ranking) it adds a note, not a
# warning: docs/evaluation-ranking.md gives the values measured on the digits zoos.
CONSENSUS_MODELS = 4
CONSENSUS_RHO = 0.4
# With labels, a correlation below this and differing calibration make a warning, not a note.
POOR_RHO = 0.5
# A fitted temperature this close (relatively) to an end of the search is that end: the bounded
# search stops within about 1e-7 of it when the slice's NLL still falls there.
BOUND_TOLERANCE = 1e-4
# How the warning says to fit temperatures (the CLI says its option instead).
CALIBRATION_ADVICE = "(calibration_outputs/calibration_labels or calibration_size)"


def caveat(names, stats_, confidence, n, accuracy, spearman, temperatures=None) -> dict[str, Any]:
    """``warnings``, ``notes``, ``consensus_agreement`` and ``consensus_spearman`` of a ranking.

    ``stats_`` holds the per-item statistics of every model (``fraction_certain``,
    ``mean_confidence``, ``class_ids``, ``predictions``, ``n_classes``); ``confidence`` is each
    model's signed mean score (higher = more confident); ``accuracy`` and ``spearman`` are None
    without labels; ``temperatures``: the temperature fitted per model when the outputs were
    temperature-scaled already (then the warning does not advise it), else None.
    """
    tempered = temperatures is not None
    warned = _certain_models(names, stats_)
    notes: list[str] = [] if temperatures is None else _temperature_bound_notes(temperatures)
    agreement = np.full(len(names), np.nan)
    consensus = None
    ids = stats_.class_ids
    if len(ids) >= CONSENSUS_MODELS:
        agreement[ids] = _calibration.consensus_agreement(stats_.predictions, stats_.n_classes)
        consensus = float(spearman_rows(confidence[ids], agreement[ids])[0])
        if not consensus >= CONSENSUS_RHO:  # NaN (a constant ranking) counts too
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
        _gap_spread(names, stats_.mean_confidence - accuracy, spearman, warned, notes)
    agrees = spearman is not None and spearman >= POOR_RHO  # after temperatures: no failure
    if warned and tempered and not agrees:
        warned.append(
            "models calibrated differently (e.g. of different families) rank poorly "
            "without labels, and the temperatures fitted on the labelled slice did not "
            "make up for it here"
        )
    elif warned and not tempered:
        warned.append(
            "models calibrated differently (e.g. of different families) rank poorly "
            f"without labels; fit temperatures on a small labelled slice {CALIBRATION_ADVICE}"
        )
    return dict(
        warnings=tuple(warned),
        notes=tuple(notes),
        consensus_agreement=agreement,
        consensus_spearman=consensus,
    )


def _certain_models(names, stats_) -> list[str]:
    certain = [
        (names[m], stats_.fraction_certain[m])
        for m in stats_.class_ids
        if stats_.fraction_certain[m] >= CERTAIN_SHARE
    ]
    if not certain:
        return []
    listed = ", ".join(f"{name} ({share:.0%})" for name, share in certain)
    return [
        f"models report probability 1 on many items: {listed}; their confidence "
        "says little about their accuracy"
    ]


def _gap_spread(names, gap, spearman, warned: list[str], notes: list[str]) -> None:
    """A warning (with a poor correlation) or a note when confidence - accuracy spreads widely."""
    if np.ptp(gap) <= GAP_SPREAD:
        return
    low, high = int(np.argmin(gap)), int(np.argmax(gap))
    fact = (
        f"mean confidence minus accuracy ranges from {gap[low]:+.3f} ({names[low]}) "
        f"to {gap[high]:+.3f} ({names[high]})"
    )
    if spearman is not None and spearman < POOR_RHO:  # NaN (equal accuracies): a note
        warned.append(
            f"{fact}, and the label-free ranking agrees poorly with accuracy "
            f"(Spearman {spearman:.3f})"
        )
    else:
        notes.append(fact)


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


def _temperature_bound_notes(temperatures: dict[str, float]) -> list[str]:
    """A note per end of the temperature search that fitted temperatures reached: there the
    labelled slice did not determine the temperature, the end of the search did."""
    low, high = _calibration.TEMPERATURE_BOUNDS
    at_low = [name for name, t in temperatures.items() if t <= low * (1 + BOUND_TOLERANCE)]
    at_high = [name for name, t in temperatures.items() if t >= high * (1 - BOUND_TOLERANCE)]
    notes = []
    if at_low:
        notes.append(
            f"the temperature fitted for {', '.join(at_low)} is the lower end of the search "
            f"({low:g}): the labelled slice's NLL still falls there (the slice's items are "
            "predicted right, all or nearly all), so the slice does not bound how confident the "
            "model should be and its tempered outputs are near-certain; a larger labelled slice "
            "would bound it"
        )
    if at_high:
        notes.append(
            f"the temperature fitted for {', '.join(at_high)} is the upper end of the search "
            f"({high:g}): on the labelled slice the model does no better than a uniform guess, "
            "so its tempered outputs are all but uniform"
        )
    return notes

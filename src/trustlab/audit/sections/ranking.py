"""Report section "Ranking models without labels": the zoo ranked by its own uncertainty.

Each model with class probabilities on the test rows gets label-free scores (mean negative
log-likelihood of its prediction, entropy, confidence, margin); the models ranked by each score
are set beside the ranking by accuracy on the test labels, with Spearman's rho and Kendall's tau
and their bootstrap intervals, as the paper evaluates it. The numbers come from
:func:`trustlab.evaluation.rank_models`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from trustlab.audit.context import AuditContext
from trustlab.report import Figure, Paragraph, Section, Table

__all__ = ["build", "TITLE"]

TITLE = "Ranking models without labels"

EXPLANATION = (
    "On new, unlabelled data one cannot measure accuracy, but each model's own uncertainty is "
    "available. Ranking models by their mean confidence (most confident first) predicts their "
    "ranking by accuracy when the models are calibrated alike (Tu et al., ICML 2025). Here the "
    "test labels are known, so the label-free rankings can be checked: a rank correlation of +1 "
    "means the label-free ranking is exactly the ranking by accuracy."
)
CAVEAT = (
    "Models of different families (here {families} models) are often calibrated differently, "
    "and then rank poorly without labels. The last row of the correlation table refits one "
    "temperature per model on a few labelled rows first."
)
#: the family of each default model, as the caveat names the ones the audit ranked
_FAMILIES = {
    "logistic_regression": "linear",
    "random_forest": "forest",
    "gradient_boosting": "boosting",
}
N_BOOTSTRAP = 1000


def build(ctx: AuditContext) -> Section | None:
    """The label-free ranking section, or None with fewer than 2 models with probabilities."""
    if len(ctx.probabilities) < 2:
        return None
    from trustlab.evaluation import SCORES, rank_models

    common = dict(
        labels=ctx.y_test,
        classes=ctx.labels,
        n_bootstrap=N_BOOTSTRAP,
        random_state=ctx.random_state,
    )
    results = {score: rank_models(ctx.probabilities, score=score, **common) for score in SCORES}
    calibration_size = _calibration_size(ctx.n_test)
    scaled = None
    if calibration_size:
        scaled = rank_models(ctx.probabilities, calibration_size=calibration_size, **common)
    nll = results["nll"]
    blocks: list = [
        Paragraph(EXPLANATION),
        _ranking_table(results),
        _correlation_table(results, scaled, calibration_size),
        _figure(nll),
    ]
    blocks += [Paragraph(text, "warning") for text in nll.warnings]
    blocks += [Paragraph(text, "note") for text in nll.notes]
    blocks.append(Paragraph(_caveat(list(ctx.probabilities)), "note"))
    data = {
        "scores": {score: result.to_dict() for score, result in results.items()},
        "temperature_scaled": None if scaled is None else scaled.to_dict(),
        "calibration_size": calibration_size,
    }
    return Section("ranking", TITLE, blocks, data, summary=_summary(nll, scaled))


def _caveat(models: list[str]) -> str:
    """CAVEAT naming the families of the ranked models (``--zoo`` may train two of the three)."""
    families = [_FAMILIES.get(name, name) for name in models]
    listed = ", ".join(families[:-1]) + f" and {families[-1]}"
    return CAVEAT.format(families=listed)


def _calibration_size(n_test: int) -> int:
    """A fifth of the test rows, at most 200, for temperature scaling; 0 if under 20 rows."""
    size = min(200, n_test // 5)
    return size if size >= 20 else 0


def _ranking_table(results: dict) -> Table:
    nll = results["nll"]
    columns = ["model", "accuracy", "accuracy interval", "rank by accuracy"]
    columns += [f"rank by {score}" for score in results]
    columns += ["mean NLL", "mean confidence", "confidence - accuracy"]
    # Models of equal accuracy share the better rank, as the label-free ranks do.
    accuracy_rank = stats.rankdata(-np.asarray(nll.accuracy), method="min").astype(int)
    rows = []
    for m, name in enumerate(nll.models):
        low, high = nll.accuracy_intervals[m]
        row = [name, float(nll.accuracy[m]), f"[{low:.3f}, {high:.3f}]", int(accuracy_rank[m])]
        row += [int(result.ranks[m]) for result in results.values()]
        row += [float(nll.scores[m]), float(nll.mean_confidence[m])]
        row.append(float(nll.calibration_gap[m]))
        rows.append(row)
    level = f"{nll.confidence_level:.0%}"
    return Table(
        columns,
        rows,
        caption=f"Models ranked without labels (rank 1 = most confident) and by accuracy on the "
        f"{nll.n_items} test rows; {level} bootstrap intervals",
    )


def _correlation_table(results: dict, scaled, calibration_size: int) -> Table:
    rows = [_correlation_row(score, result) for score, result in results.items()]
    if scaled is not None:
        label = (
            f"nll, temperatures fitted on {calibration_size} labelled rows, ranked on the "
            f"other {scaled.n_items}"
        )
        rows.append(_correlation_row(label, scaled))
    return Table(
        ["score", "Spearman rho", "rho interval", "Kendall tau", "tau interval"],
        rows,
        caption="Rank correlation between each label-free ranking and the ranking by accuracy",
    )


def _correlation_row(label: str, result) -> list:
    return [
        label,
        result.spearman,
        _interval(result.spearman_interval),
        result.kendall,
        _interval(result.kendall_interval),
    ]


def _interval(pair) -> str:
    if pair is None or not np.all(np.isfinite(pair)):
        return "n/a"
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _figure(result) -> Figure:
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(6.5, 4.2))
    result.plot(ax=fig.add_subplot())
    return Figure(
        fig,
        caption="Label-free score (mean NLL of each model's prediction; lower = more confident) "
        "against accuracy, with bootstrap intervals",
        alt="Scatter plot of each model's mean negative log-likelihood against its accuracy",
    )


def _summary(nll, scaled) -> str:
    text = (
        f"Ranked without labels by mean NLL, the models' order against their order by "
        f"accuracy: Spearman rho = {_number(nll.spearman)} and Kendall tau = "
        f"{_number(nll.kendall)}"
    )
    if scaled is not None:
        text += f" ({_number(scaled.spearman)} after temperature scaling)"
    # "agrees with ... rho = -0.50" read as agreement; say what the sign means
    return text + " (+1: the same order, 0: unrelated, -1: reversed)."


def _number(value) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:+.2f}"

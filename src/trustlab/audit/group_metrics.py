"""Group fairness metrics as fairlearn computes them, with bootstrap intervals over rows.

The point estimates come from fairlearn itself: ``MetricFrame`` (count, selection rate, true and
false positive rate per group) and its ``difference(method="between_groups")``, from which
fairlearn's ``demographic_parity_difference`` and ``equalized_odds_difference``
(``method="between_groups"``, ``agg="worst_case"``, the defaults) take theirs.
These metrics are binary: with two classes the positive class is the second of the sorted labels;
with more, each class is read one-vs-rest (positive = "truly this class", selected = "predicted
this class").

The intervals come from a bootstrap over the audited rows: ``n_boot`` times, as many rows as
there are are drawn with replacement and every metric is computed again. A per-group rate gets the
percentile interval of its resampled values. A difference (largest minus smallest value over the
groups) reads higher in resamples than in the data it is resampled from, by about as much as the
estimate itself reads above the true difference, and most where groups are small; its percentile
interval can then lie wholly above the estimate. So a difference gets the percentile interval of
its resampled values re-centred on the estimate: ``estimate + (resampled - mean of the
resamples)``, the bootstrap's spread without its bias (clipped to [0, 1]).

Calling fairlearn on each resample would take about a second per model and class, so the
resamples are drawn as counts of the (true label, prediction, group) cells, which is the same
distribution (a multinomial), and the metrics are evaluated from those counts with fairlearn's
definitions (a group without positives has a true positive rate of 0, as fairlearn's confusion
matrix gives). Every run checks that this evaluation reproduces fairlearn's own numbers on the
audited rows; the tests check it on resamples too.

One departure in the resamples: a rate defined on the audited rows can be undefined in a resample
(a 5-row group with 2 positives draws none in about 1 resample of 8). Counting it as 0 there, as
fairlearn would, put a perfect model's equalized odds interval at [0, 0.96]: the resample's
"difference" is that missing rate, not a disparity. Such a rate is left out of that resample (its
group's interval and the spread over the groups), and each class reports in
``resamples_with_rate_left_out`` how many resamples left one out. A rate undefined on the audited
rows (a group with no row of the class) never gets defined in a resample, keeps fairlearn's 0 and
is named by the section's undefined-rate note.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = [
    "N_BOOT",
    "CONFIDENCE",
    "group_metrics",
    "cell_counts",
    "rates_from_counts",
    "largest_equalized_odds",
    "equalized_odds_caveat",
]

#: audited rows below which a group's rates are called noisy (the fairness section's threshold)
SMALL_GROUP = 100
#: rows a TPR (FPR) is computed from below which it is called noisy even in a larger group (a
#: rare class): a rate from 30 rows has a 95% interval up to +-0.18 wide
SMALL_RATE_ROWS = 30

N_BOOT = 1000
CONFIDENCE = 0.95
_RATES = ("selection_rate", "true_positive_rate", "false_positive_rate")


def group_metrics(
    y_true,
    y_pred,
    groups,
    labels,
    *,
    random_state: int,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """fairlearn's group metrics per positive class, with bootstrap intervals.

    Parameters
    ----------
    y_true, y_pred, groups : array-like of shape (n,)
    labels : array-like
        The sorted class labels (every value of ``y_true`` and ``y_pred``).
    random_state : int
        Seed of the bootstrap.
    n_boot : int
        Bootstrap resamples.
    confidence : float
        Coverage of the percentile intervals.

    Returns
    -------
    dict
        ``{"classes": {class: {"demographic_parity_difference": {"estimate", "lower",
        "upper"}, "equalized_odds_difference": {...}, "by_group": {group: {"count",
        "selection_rate": {...}, "true_positive_rate": {...}, "false_positive_rate": {...},
        "positives", "negatives"}}, "groups_without_positives", "groups_without_negatives",
        "equalized_odds_difference_where_defined", "resamples_with_rate_left_out"}},
        "one_vs_rest", "positive_classes", "groups", "n_boot", "confidence", "random_state",
        "fairlearn_version"}``.
    """
    import fairlearn  # imported here: the audit's other sections do not need it
    import fairlearn.metrics as metrics

    y_true, y_pred, groups = (np.asarray(a) for a in (y_true, y_pred, groups))
    labels = np.asarray(labels)
    group_values = np.unique(groups)
    counts = cell_counts(y_true, y_pred, groups, labels, group_values)
    rng = np.random.default_rng(random_state)
    n = int(counts.sum())
    resampled = rng.multinomial(n, counts.ravel() / n, size=n_boot).reshape((n_boot, *counts.shape))
    positives = [labels[1]] if len(labels) == 2 else list(labels)
    tail = (1 - confidence) / 2
    classes = {}
    for k in positives:
        index = int(np.flatnonzero(labels == k)[0])
        point = _fairlearn_point(metrics, y_true == k, y_pred == k, groups, group_values)
        check = rates_from_counts(counts[None], index)
        _check_agrees(point, check, k)
        positive = counts[index].sum(axis=0)
        defined = (positive > 0, counts.sum(axis=(0, 1)) > positive)
        boot = rates_from_counts(resampled, index, defined=defined)
        classes[_key(k)] = _with_intervals(point, boot, group_values, tail)
        classes[_key(k)].update(
            _undefined_rates(counts, index, check, group_values, classes[_key(k)]),
            resamples_with_rate_left_out=int(boot["left_out"].sum()),
        )
    return {
        "fairlearn_version": fairlearn.__version__,
        "one_vs_rest": len(labels) > 2,
        "positive_classes": [_key(k) for k in positives],
        "groups": [_key(g) for g in group_values],
        "n_boot": n_boot,
        "confidence": confidence,
        "random_state": random_state,
        "classes": classes,
    }


def cell_counts(y_true, y_pred, groups, labels, group_values) -> np.ndarray:
    """Rows per (true label, predicted label, group): an int array of shape (K, K, G)."""
    k, n_groups = len(labels), len(group_values)
    yi = _codes(y_true, labels)
    pi = _codes(y_pred, labels)
    gi = _codes(groups, group_values)
    flat = np.bincount((yi * k + pi) * n_groups + gi, minlength=k * k * n_groups)
    return flat.reshape(k, k, n_groups)


def rates_from_counts(counts: np.ndarray, k: int, defined=None) -> dict[str, np.ndarray]:
    """Per-group rates and the two differences of class ``k`` (one-vs-rest) from cell counts.

    ``counts`` has shape (B, K, K, G); returns arrays of shape (B, G) (NaN for a group absent
    from a resample) and (B,) for the differences, with fairlearn's definitions. ``defined``,
    for resamples: the groups (G,) with positives and those with negatives on the audited rows;
    a TPR of such a group without positives in a resample (FPR: negatives) is then NaN instead
    of fairlearn's 0, so it is left out of the differences, and ``"left_out"`` (B,) says which
    resamples left one out.
    """
    counts = np.asarray(counts, dtype=np.float64)
    rows = counts.sum(axis=(1, 2))
    selected = counts[:, :, k, :].sum(axis=1)
    positive = counts[:, k, :, :].sum(axis=1)
    true_pos = counts[:, k, k, :]
    negative = rows - positive
    false_pos = selected - true_pos
    present = rows > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = {
            "count": np.where(present, rows, np.nan),
            "selection_rate": np.where(present, selected / rows, np.nan),
            "true_positive_rate": np.where(positive > 0, true_pos / positive, 0.0),
            "false_positive_rate": np.where(negative > 0, false_pos / negative, 0.0),
        }
    if defined is not None:
        lost_tpr = present & (positive == 0) & defined[0]
        lost_fpr = present & (negative == 0) & defined[1]
        rates["left_out"] = (lost_tpr | lost_fpr).any(axis=1)
        rates["true_positive_rate"][lost_tpr] = np.nan
        rates["false_positive_rate"][lost_fpr] = np.nan
    for name in ("true_positive_rate", "false_positive_rate"):
        rates[name] = np.where(present, rates[name], np.nan)
    spread = {name: _spread(rates[name]) for name in _RATES}
    rates["demographic_parity_difference"] = spread["selection_rate"]
    # fmax: a rate undefined in every group of a resample leaves the other one
    rates["equalized_odds_difference"] = np.fmax(
        spread["true_positive_rate"], spread["false_positive_rate"]
    )
    return rates


def _spread(values: np.ndarray) -> np.ndarray:
    """Largest minus smallest value over the groups present (fairlearn's between_groups); NaN
    where no group has a value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a row of NaN gives NaN, not noise
        return np.nanmax(values, axis=1) - np.nanmin(values, axis=1)


def _codes(values: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """The position of each value in the sorted ``categories``."""
    return np.searchsorted(categories, values)


def _fairlearn_point(metrics, positive, selected, groups, group_values) -> dict[str, Any]:
    """The per-group rates (MetricFrame) and both differences, as fairlearn computes them."""
    y_true, y_pred = positive.astype(int), selected.astype(int)
    frame = metrics.MetricFrame(
        metrics={
            "count": metrics.count,
            "selection_rate": metrics.selection_rate,
            "true_positive_rate": metrics.true_positive_rate,
            "false_positive_rate": metrics.false_positive_rate,
        },
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    by_group = frame.by_group
    # fairlearn's demographic_parity_difference is MetricFrame(selection_rate).difference() and
    # its equalized_odds_difference max(MetricFrame({tpr, fpr}).difference()) (between_groups,
    # worst_case): the same differences of this frame's columns, without building two more
    # frames (3 of the 7 metric evaluations; the tests compare with the functions exactly)
    difference = frame.difference(method="between_groups")
    return {
        "by_group": {
            g: {name: float(by_group.loc[g, name]) for name in ("count", *_RATES)}
            for g in group_values
        },
        "demographic_parity_difference": float(difference["selection_rate"]),
        "equalized_odds_difference": float(
            max(difference[["true_positive_rate", "false_positive_rate"]])
        ),
    }


def _check_agrees(point: dict, counted: dict, k) -> None:
    """The counts-based evaluation must give fairlearn's numbers on the audited rows."""
    found = [
        counted[name][0] for name in ("demographic_parity_difference", "equalized_odds_difference")
    ]
    wanted = [point["demographic_parity_difference"], point["equalized_odds_difference"]]
    for j, g in enumerate(point["by_group"]):
        for name in _RATES:
            found.append(counted[name][0, j])
            wanted.append(point["by_group"][g][name])
    if not np.allclose(found, wanted, rtol=0, atol=1e-9):
        raise RuntimeError(
            f"the bootstrap's evaluation of class {k!r} differs from fairlearn's on the audited "
            "rows; intervals would not match fairlearn's definitions"
        )


def _with_intervals(point: dict, boot: dict, group_values, tail: float) -> dict[str, Any]:
    def interval(estimate: float, samples: np.ndarray, recentre: bool = False) -> dict:
        samples = samples[np.isfinite(samples)]
        if samples.size == 0:
            return {"estimate": estimate, "lower": None, "upper": None}
        if recentre:  # a difference: the resamples' spread around the estimate, not their bias
            samples = np.clip(estimate + (samples - samples.mean()), 0.0, 1.0)
        lower, upper = np.quantile(samples, [tail, 1 - tail])
        return {"estimate": estimate, "lower": float(lower), "upper": float(upper)}

    by_group = {}
    for j, g in enumerate(group_values):
        values = point["by_group"][g]
        by_group[_key(g)] = {
            "count": int(values["count"]),
            **{name: interval(values[name], boot[name][:, j]) for name in _RATES},
        }
    return {
        name: interval(point[name], boot[name], recentre=True)
        for name in ("demographic_parity_difference", "equalized_odds_difference")
    } | {"by_group": by_group}


def _undefined_rates(
    counts: np.ndarray, k: int, rates: dict, group_values, result: dict
) -> dict[str, Any]:
    """Where class ``k``'s TPR or FPR is undefined, and the equalized odds difference without it
    (``rates``: :func:`rates_from_counts` of ``counts[None]``, already computed by the caller).

    A group without positives (no row of the class) has no true positive rate, and one without
    negatives no false positive rate; fairlearn counts such a rate as 0 and the estimate keeps
    that. This adds each group's ``positives`` and ``negatives`` to ``result["by_group"]`` and
    returns ``groups_without_positives``, ``groups_without_negatives`` and
    ``equalized_odds_difference_where_defined`` (the larger spread of the TPRs over the groups
    with positives and the FPRs over those with negatives; None when neither has 2 groups).
    """
    rows = counts.sum(axis=(0, 1))
    positive = counts[k].sum(axis=0)
    negative = rows - positive
    spreads = []
    for name, has in (("true_positive_rate", positive > 0), ("false_positive_rate", negative > 0)):
        defined = rates[name][0][(rows > 0) & has]
        if defined.size >= 2:
            spreads.append(float(defined.max() - defined.min()))
    for j, g in enumerate(group_values):
        result["by_group"][_key(g)].update(positives=int(positive[j]), negatives=int(negative[j]))
    present = [(g, j) for j, g in enumerate(group_values) if rows[j] > 0]
    return {
        "groups_without_positives": [_key(g) for g, j in present if positive[j] == 0],
        "groups_without_negatives": [_key(g) for g, j in present if negative[j] == 0],
        "equalized_odds_difference_where_defined": max(spreads) if spreads else None,
    }


def largest_equalized_odds(classes: dict[str, dict]) -> dict[str, Any] | None:
    """Where a model's largest equalized odds difference over the classes comes from.

    ``classes`` is one model's ``group_metrics(...)["classes"]``. Returns None without a
    difference, else ``{"class", "estimate", "lower", "upper", "rate", "groups", "rate_rows",
    "where_defined"}``: ``rate`` is "TPR" or "FPR", the rate whose spread over the groups is the
    difference, ``groups`` maps the groups holding its largest and smallest value to their
    audited rows (a headline resting on a small group is mostly noise) and ``rate_rows`` to the
    rows the rate is computed from (TPR: the group's rows truly of the class, FPR: the others),
    few for a rare class however large the group.
    """
    found = [
        (k, m) for k, m in classes.items() if m["equalized_odds_difference"]["estimate"] is not None
    ]
    if not found:
        return None
    k, metrics = max(found, key=lambda item: item[1]["equalized_odds_difference"]["estimate"])
    by_group = metrics["by_group"]
    spreads = {}
    for rate, key in (("TPR", "true_positive_rate"), ("FPR", "false_positive_rate")):
        values = {g: b[key]["estimate"] for g, b in by_group.items()}
        values = {g: v for g, v in values.items() if v is not None}
        high, low = (
            max(values, key=values.get, default=None),
            min(values, key=values.get, default=None),
        )
        if high is not None and values[high] > values[low]:  # no groups when all are equal
            spreads[rate] = (values[high] - values[low], high, low)
    difference = metrics["equalized_odds_difference"]
    rate = max(spreads, key=lambda r: spreads[r][0]) if spreads else None
    groups = {g: by_group[g]["count"] for g in spreads[rate][1:]} if rate else {}
    basis = "positives" if rate == "TPR" else "negatives"
    rate_rows = {g: by_group[g].get(basis) for g in groups}
    return {
        "class": k,
        "estimate": difference["estimate"],
        "lower": difference["lower"],
        "upper": difference["upper"],
        "rate": rate,
        "groups": groups,
        "rate_rows": rate_rows,
        "where_defined": metrics.get("equalized_odds_difference_where_defined"),
    }


def equalized_odds_caveat(source: dict[str, Any] | None, one_vs_rest: bool) -> str:
    """`` (class ...; 95% interval [...]; the TPRs of ...)``: what a headline equalized odds
    difference rests on (``source``: :func:`largest_equalized_odds`), to print after it: its
    class (``one_vs_rest``), interval, the two groups whose rates set it (a small one makes it
    mostly noise) and an undefined rate counted as 0. Empty without a source."""
    if not source:
        return ""
    parts = [f"class {source['class']}"] if one_vs_rest else []
    if source["lower"] is not None:
        parts.append(f"{CONFIDENCE:.0%} interval [{source['lower']:.4f}, {source['upper']:.4f}]")
    if len(source["groups"]) == 2 and source["estimate"] > 0:
        parts += _rate_groups(source)
    defined = source["where_defined"]
    if defined is None or abs(defined - source["estimate"]) > 1e-9:
        where = "none" if defined is None else f"{defined:.4f}"
        parts.append(f"it counts an undefined rate as 0 ({where} where the rates are defined)")
    return f" ({'; '.join(parts)})" if parts else ""


def _rate_groups(source: dict[str, Any]) -> list[str]:
    """The caveat's parts on the two groups whose rates set the difference: their audited rows,
    the rows each rate is computed from (a rare class's TPR rests on a few rows of a large
    group), and which of them are too few for a steady rate."""
    # a TPR is computed from the group's rows truly of the class, an FPR from the others
    kind = f"truly {source['class']}" if source["rate"] == "TPR" else f"not {source['class']}"
    basis = source.get("rate_rows") or {}
    described, small_groups, small_rates = [], [], []
    for g, n in source["groups"].items():
        text = f"{n:,} audited row{'' if n == 1 else 's'}"
        if basis.get(g) is not None:
            text += f", {basis[g]:,} {kind}"
        described.append(f"{g} ({text})")
        if n < SMALL_GROUP:
            small_groups.append(g)
        elif basis.get(g) is not None and basis[g] < SMALL_RATE_ROWS:
            small_rates.append(g)
    parts = [f"the {source['rate']}s of " + " and ".join(described)]
    for small, what in (
        (small_groups, f"{SMALL_GROUP} rows"),
        (small_rates, f"{SMALL_RATE_ROWS} rows {kind}"),
    ):
        if small:
            verb = "has" if len(small) == 1 else "have"
            parts.append(f"{' and '.join(small)} {verb} under {what}: noisy rates")
    return parts


def _key(value) -> str:
    """A class or group value as a JSON key."""
    return str(value.item() if hasattr(value, "item") else value)

"""Label-free ranking of models by their own uncertainty ("Ranked from Within", ICML 2025).

Given several models' outputs on the same unlabelled items, each model gets the mean of a
per-item uncertainty statistic of its softmax outputs (``scores``), and the models are ranked by
it, most confident first. With labels, the ranking is checked against the ranking by accuracy
with Spearman's rho and Kendall's tau (the paper's evaluation). Every number comes with a paired
percentile bootstrap interval: the same resampled items for every model (``_bootstrap``).

The method assumes models calibrated alike (as large models of one family are); across families
it ranks poorly. :func:`rank_models` reports the signs of that it can see (``_caveat``), and can
fit one temperature per model on a small labelled slice first (``_calibration``). This module
holds the public entry point, the checks of its inputs and the assembly of the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import (
    as_1d,
    check_bool,
    check_choice,
    check_positive_int,
    check_probability,
    check_random_state,
)
from trustlab.errors import InputError
from trustlab.evaluation import _bootstrap, _calibration
from trustlab.evaluation._caveat import caveat
from trustlab.evaluation._correlation import kendall_rows, spearman_rows
from trustlab.evaluation.results import RankingResult
from trustlab.evaluation.scores import (
    LOWER_IS_CONFIDENT,
    SCORES,
    TOKEN_POSITIONS,
    TokenLogProbs,
    check_class_output,
    check_key_tokens,
    check_token_score,
    class_statistics,
    token_statistics,
)

__all__ = ["rank_models"]


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
        model's answer tokens. At least 2 models. Columns are read by position: DataFrames
        must have the same columns (and ``classes`` in their order, unless numbered 0..K-1).
    score : {"nll", "entropy", "max_prob", "margin"}
        The per-item statistic (see :func:`item_scores`); "nll" is the paper's recommendation.
    from_logits : bool
        The 2-D outputs (and calibration outputs) are logits, e.g. an LLM's log-probabilities of
        the option letters.
    labels : array-like (n,), optional
        True classes: column indices 0..K-1, or values of ``classes``; booleans for a model with
        2 columns (False is column 0, True column 1, as sklearn orders them).
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
    reports probability 1 can still be softened. Tied models share the better rank; mean
    scores within 1e-12 (relative to max(1, |score|)) tie, as rounding splits the same model
    given two ways (logits, or logits plus a constant). See
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
    level = check_probability(confidence_level, "confidence_level")
    rng = check_random_state(random_state)
    from_logits = check_bool(from_logits, "from_logits")
    names, checked = _check_outputs(outputs, from_logits)
    _check_columns({"outputs": outputs, "calibration_outputs": calibration_outputs}, classes)
    tokens = [v for v in checked if isinstance(v, TokenLogProbs)]
    if tokens:
        check_token_score(score)
        check_key_tokens(token_position, tokens)
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
    _bootstrap.warn_if_too_few(n_bootstrap, level)  # after the checks: bad input warns nothing
    is_logits = from_logits or temperatures is not None
    stats_ = _item_statistics(checked, is_logits, score, token_position)
    truth = _Truth(label_index, correctness, temperatures)
    return _rank(names, stats_, score, token_position, truth, n_bootstrap, level, rng)


# ---------------------------------------------------------------------------------------------
# Input checks


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
            checked.append(check_class_output(value, name, from_logits))
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


def _check_columns(mappings: Mapping[str, Any], classes: Any) -> None:
    """DataFrame outputs name their classes in their columns, which are read by position: the
    same columns for every model (and, when labelled, ``classes`` in that order). A model whose
    columns came in another order had its accuracy computed against the wrong classes."""
    seen: tuple[str, list] | None = None
    for argument, outputs in mappings.items():
        if not isinstance(outputs, Mapping):
            continue
        for key, value in outputs.items():
            columns = getattr(value, "columns", None)
            if columns is None or isinstance(value, TokenLogProbs):
                continue
            where, columns = f"{argument}[{key!r}]", list(columns)
            if seen is None:
                seen = (where, columns)
            elif columns != seen[1]:
                expected = f"the columns {seen[1]!r} of {seen[0]} (columns are read by position)"
                raise InputError.bad(where, expected, columns)
    if seen is None or classes is None or seen[1] == list(range(len(seen[1]))):
        return  # no DataFrame, no classes, or pandas' default column numbers
    given = as_1d(classes, "classes").tolist()  # an array said only its shape and dtype
    if seen[1] != given:
        raise InputError.bad(
            "classes", f"the columns of the DataFrame outputs in their order {seen[1]!r}", given
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


def _label_index(labels: Any, classes: Any, n_classes: int, argument: str) -> np.ndarray:
    """Column indices of ``labels``: through ``classes`` if given, else labels are 0..K-1."""
    arr = as_1d(labels, argument)
    if classes is None and arr.dtype.kind == "b":  # False/True: columns 0/1, as sklearn's
        if n_classes != 2:
            raise InputError.bad(
                argument, f"class indices 0..{n_classes - 1} (booleans only with 2 columns)", arr
            )
        return arr.astype(np.int64)
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


def _require_class_models(checked, option: str) -> None:
    if any(isinstance(v, TokenLogProbs) for v in checked):
        raise InputError.bad(
            option,
            "class-probability outputs for every model (TokenLogProbs "
            "hold no distribution to rescale or to predict from)",
            "TokenLogProbs outputs",
        )


# ---------------------------------------------------------------------------------------------
# Temperature scaling on a labelled slice


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
    expected = f"(n_cal, {n_classes}) outputs of each of the models {list(names)}"
    given = (
        list(map(str, calibration_outputs)) if isinstance(calibration_outputs, Mapping) else None
    )
    if given is not None and set(given) != set(names):  # before "at least 2 models to rank"
        raise InputError.bad("calibration_outputs", expected, given)
    cal_names, cal_checked = _check_outputs(calibration_outputs, from_logits, "calibration_outputs")
    if any(isinstance(v, TokenLogProbs) or v.shape[1] != n_classes for v in cal_checked):
        raise InputError.bad("calibration_outputs", expected, list(cal_names))
    by_name = dict(zip(cal_names, cal_checked, strict=True))
    cal_index = _label_index(labels, classes, n_classes, "calibration_labels")
    if len(cal_index) != len(cal_checked[0]):
        raise InputError.bad(
            "calibration_labels",
            f"{len(cal_checked[0])} labels (one per calibration item)",
            cal_index,
        )
    return _calibrated(checked, names, from_logits, [by_name[k] for k in names], cal_index)


def _calibrated(checked, names, from_logits, fit_logits, fit_labels) -> tuple[list, dict]:
    """Each class model's outputs as tempered logits, and the fitted temperatures."""
    tempered, temperatures = [], {}
    for name, values, fit in zip(names, checked, fit_logits, strict=True):
        logits = values if from_logits else _calibration.logits_from_probabilities(values)
        fit = fit if from_logits else _calibration.logits_from_probabilities(fit)
        temperature = _calibration.fit_temperature(fit, fit_labels)
        temperatures[name] = temperature
        tempered.append(_calibration.tempered_log_probabilities(logits, temperature))
    return tempered, temperatures


# ---------------------------------------------------------------------------------------------
# Ranking (inputs checked)


@dataclass(frozen=True)
class _ItemStatistics:
    """Per-item scores of all models, and what the class-probability models predict."""

    item: np.ndarray  # (n, M)
    mean_confidence: np.ndarray  # (M,), NaN for TokenLogProbs models
    fraction_certain: np.ndarray  # (M,), likewise
    class_ids: np.ndarray  # the models with class outputs
    predictions: np.ndarray  # (len(class_ids), n)
    n_classes: int


@dataclass(frozen=True)
class _Truth:
    """What the ranking is checked against, and the temperatures fitted on the way."""

    label_index: np.ndarray | None  # (n,) label columns
    correctness: np.ndarray | None  # (n, M) 0/1 from ``correct``
    temperatures: dict[str, float] | None


def _item_statistics(checked, is_logits, score, token_position) -> _ItemStatistics:
    n, n_models = len(checked[0]), len(checked)
    item = np.empty((n, n_models))
    mean_confidence = np.full(n_models, np.nan)
    fraction_certain = np.full(n_models, np.nan)
    class_ids, predictions = [], []
    for m, values in enumerate(checked):
        if isinstance(values, TokenLogProbs):
            item[:, m] = token_statistics(values, score, token_position)
            continue
        item[:, m], max_prob, predicted = class_statistics(values, is_logits, score)
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


def _rank(names, stats_, score, token_position, truth, n_bootstrap, level, rng) -> RankingResult:
    n, n_models = stats_.item.shape
    correctness = truth.correctness
    if truth.label_index is not None:
        correctness = (stats_.predictions == truth.label_index).T
    sign = -1.0 if LOWER_IS_CONFIDENT[score] else 1.0
    scores = stats_.item.mean(axis=0)
    confidence = _bootstrap.merge_near_ties(sign * scores)  # ties to rounding are ties
    ranks = _bootstrap.descending_ranks(confidence)
    boot = boot_confidence = score_intervals = rank_intervals = None
    if n_bootstrap:
        blocks = [stats_.item]
        if correctness is not None:
            exact_in_float32 = n < 2**24  # 0/1 sums stay exact integers in float32
            blocks.append(correctness.astype(np.float32 if exact_in_float32 else np.float64))
        boot = np.hstack(_bootstrap.bootstrap_means(blocks, n_bootstrap, rng))
        score_intervals = _bootstrap.percentile_interval(boot[:, :n_models], level)
        boot_confidence = _bootstrap.merge_near_ties(sign * boot[:, :n_models])
        rank_intervals = _bootstrap.rank_interval(boot_confidence, level)
    fields: dict[str, Any] = dict(
        models=names,
        score=score,
        lower_is_confident=LOWER_IS_CONFIDENT[score],
        scores=scores,
        score_intervals=score_intervals,
        predicted_ranking=tuple(names[m] for m in np.lexsort((np.arange(n_models), ranks))),
        ranks=ranks,
        rank_intervals=rank_intervals,
        mean_confidence=stats_.mean_confidence,
        fraction_certain=stats_.fraction_certain,
        n_items=n,
        n_bootstrap=n_bootstrap,
        confidence_level=level,
        token_position=token_position if len(stats_.class_ids) < n_models else None,
        temperatures=truth.temperatures,
    )
    if correctness is not None:
        fields.update(_evaluation(names, confidence, correctness, boot_confidence, boot, level))
        if len(stats_.class_ids) == n_models:
            fields["calibration_gap"] = stats_.mean_confidence - fields["accuracy"]
    accuracy, spearman = fields.get("accuracy"), fields.get("spearman")
    fields.update(caveat(names, stats_, confidence, n, accuracy, spearman, truth.temperatures))
    return RankingResult(**fields)


def _evaluation(names, confidence, correctness, boot_confidence, boot, level) -> dict[str, Any]:
    """Accuracy, the true ranking and the rank correlations with their intervals.

    ``confidence`` is the signed mean score, ``boot_confidence`` its resamples, near ties merged
    (+1 correlation: the label-free ranking is right).
    """
    n_models = len(names)
    accuracy = correctness.mean(axis=0)
    true_order = np.lexsort((np.arange(n_models), -accuracy))
    out: dict[str, Any] = dict(
        accuracy=accuracy,
        true_ranking=tuple(names[m] for m in true_order),
        spearman=float(spearman_rows(confidence, accuracy)[0]),
        kendall=float(kendall_rows(confidence, accuracy)[0]),
    )
    if boot is not None:
        boot_accuracy = boot[:, n_models:]
        out["accuracy_intervals"] = _bootstrap.percentile_interval(boot_accuracy, level)
        out["spearman_interval"] = _bootstrap.interval_pair(
            spearman_rows(boot_confidence, boot_accuracy), level
        )
        out["kendall_interval"] = _bootstrap.interval_pair(
            kendall_rows(boot_confidence, boot_accuracy), level
        )
        for name in ("spearman", "kendall"):  # undefined on the data: no interval from the
            if np.isnan(out[name]):  # resamples where it happens to be defined
                out[f"{name}_interval"] = (float("nan"), float("nan"))
    return out

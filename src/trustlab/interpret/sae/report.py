"""The page of an SAE interpretation run: each latent's scores beside the shuffled control,
the agreement between scorers, accuracy by activation quantile, and the best and worst latents
in context (the spec's CPU-scale plan, item 4).

:func:`sae_report` reads score rows, one per latent and kind, as ``sae score`` writes them to
``scores.jsonl``: ``{"latent": 3, "shuffled": false, "explanation": "...", "detection": 0.71,
"detection_interval": [0.6, 0.8], "detection_examples": {...}, ...}``. A row with
``"shuffled": true`` scored another latent's explanation on this latent's examples (the
control of Paulo et al.). A method's value may also be the scorer's result itself
(:class:`~trustlab.interpret.sae.scoring.ClassificationScore` or
:class:`~trustlab.interpret.sae.ranking.RankingScore`), whose interval and per-example answers
are then read from it. From them:

- **per latent and method**: the score (balanced accuracy for detection and fuzzing, the spec's
  aggregation; AUROC for embedding, surprisal and the ``*_auroc`` probability answers), its
  95 % bootstrap interval over examples as the scorer computed it, and the shuffled
  explanation's score beside it;
- **per method**: the mean over latents of the true and of the shuffled explanations' scores
  and of their paired difference (true minus shuffled, latent by latent), each with a 95 %
  percentile bootstrap interval over latents;
- **agreement**: Spearman's rho between every two methods across latents (true explanations;
  latents where either score is missing are left out; fewer than three latents, or a constant
  score, gives NaN);
- **by activation quantile**, where the rows hold per-example answers: for detection and
  fuzzing the share of examples answered correctly in each quantile (pooled over latents; the
  non-activating examples as their own row), for embedding and surprisal the mean over latents
  of the AUROC of one quantile's examples against the non-activating ones;
- **the best and worst** ``n_best`` latents by one method (the true explanation's score; ties
  by latent index; with fewer than ``2 n_best`` scored latents the better half are the best
  and the rest the worst, so that none is shown twice): their
  explanations and ``n_contexts`` held-out test contexts from the latent cache, spread over the
  activation range, each token's background as strong as its activation over the latent's
  largest (text escaped).

:func:`trustlab.audit.sections.sae.write_page` writes its page, ``report.html``
(self-contained: figures as inline PNG, no script, no network) and ``report.json``.

Why this module is long: the report is one result whose numbers (means, agreement, quantiles,
best and worst latents, why latents have no score) all come from the same rows, read and checked
once here; split, each part would re-read or pass around the checked rows.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_random_state
from trustlab._results import Result, new_axes
from trustlab.errors import InputError
from trustlab.interpret.sae.cache import LatentCache
from trustlab.interpret.sae.ranking import RankingScore, _auroc
from trustlab.interpret.sae.scoring import ClassificationScore

__all__ = ["SAEReport", "sae_report", "SCORE_KEYS", "no_score_reason", "uncalibrated_text"]

#: The score keys a row may hold, in the order the page shows them.
SCORE_KEYS = ("detection", "detection_auroc", "fuzzing", "fuzzing_auroc", "embedding",
              "surprisal", "intervention")  # fmt: skip
_ACCURACY = ("detection", "fuzzing")  # per-example answers: correct or not
_RANKING = ("embedding", "surprisal")  # per-example scores: AUROC by quantile
_SAMPLING = (
    "ctx_len", "n_train", "n_test", "n_quantiles", "n_not_active", "train_strategy",
    "min_examples", "seed",
)  # fmt: skip
_NO_INTERVAL = (math.nan, math.nan)


@dataclass(frozen=True)
class SAEReport(Result):
    """The numbers of an SAE interpretation run's page (see the module docstring).

    Attributes
    ----------
    methods : tuple of str
        The score keys found, in :data:`SCORE_KEYS` order.
    rank_by : str
        The method the best and worst latents are chosen by.
    n_latents : int
    means : dict
        Per method: ``true``, ``shuffled`` and ``difference`` (paired, true minus shuffled)
        means over latents, each with its ``*_interval`` (95 % percentile bootstrap over
        latents), the latents counted (``n``, ``n_shuffled``, ``n_paired``) and ``no_score``:
        why the other latents' true scores are missing, reason -> number of latents
        (:func:`no_score_reason`; for ``intervention`` the row's ``intervention_error`` or
        'no score'), left out of the means. ``intervention`` also has
        ``uncalibrated``: latents whose strength did not reach the calibration's KL target
        (rows with ``intervention_calibrated`` false; their scores are at that strength, in
        the means).
    correlations : tuple of dict
        ``{"a", "b", "rho", "p_value", "n"}`` for every two methods (Spearman, true
        explanations).
    by_quantile : dict
        Per method with per-example answers: ``measure`` ("accuracy" or "auroc"), ``quantiles``
        (labels: "non-activating", then 0 = the weakest bin ...), ``true``, ``shuffled`` and
        ``n`` (examples, or latents for AUROC) per label.
    latents : tuple of dict
        Per latent: ``latent``, ``explanation``, ``shuffled_explanation`` and ``scores``
        (method -> ``score``, ``interval``, ``shuffled``, ``shuffled_interval``).
    best, worst : tuple of int
        Latents, best (or worst) first.
    contexts : dict
        Latent (of the best and worst) -> its shown contexts: ``tokens`` (texts),
        ``activations`` and the latent's ``max_activation``.
    n_bootstrap : int
    """

    methods: tuple[str, ...]
    rank_by: str
    n_latents: int
    means: dict
    correlations: tuple
    by_quantile: dict
    latents: tuple
    best: tuple[int, ...]
    worst: tuple[int, ...]
    contexts: dict
    n_bootstrap: int

    figure_name = "sae_scores.png"

    def summary(self) -> str:
        m = self.means[self.rank_by]
        lines = [
            f"SAE interpretation run: {self.n_latents} latents scored by {', '.join(self.methods)}"
        ]
        for method in self.methods:
            v = self.means[method]
            lines.append(
                f"  {method}: true {_fmt(v['true'])} {_span(v['true_interval'])}, shuffled "
                f"{_fmt(v['shuffled'])} {_span(v['shuffled_interval'])}, difference "
                f"{_fmt(v['difference'])} {_span(v['difference_interval'])}"
            )
            if v.get("no_score"):  # left out of the means: say how many and why
                why = "; ".join(f"{n} ({reason})" for reason, n in v["no_score"].items())
                lines.append(
                    f"    over {v['n']} of {self.n_latents} latents; without a score: {why}"
                )
            if v.get("uncalibrated"):
                lines.append(f"    {uncalibrated_text(v['uncalibrated'], self.n_latents)}")
        if self.best:
            score = {r["latent"]: _fmt(r["scores"][self.rank_by]["score"]) for r in self.latents}
            best, worst = self.best[0], (self.worst or self.best[::-1])[0]
            lines.append(
                f"  by {self.rank_by}: best latent {best} ({score[best]}), worst latent {worst} "
                f"({score[worst]}); mean {_fmt(m['true'])}"
            )
        return "\n".join(lines)

    def plot(self, ax: Any = None) -> Any:
        """Mean score per method, true against shuffled explanations, with 95 % intervals."""
        ax = new_axes(ax)
        x = np.arange(len(self.methods))
        for offset, kind, colour in ((-0.2, "true", "C0"), (0.2, "shuffled", "C7")):
            means = np.array([_nan(self.means[m][kind]) for m in self.methods])
            low, high = (
                np.array([_nan(self.means[m][f"{kind}_interval"][j]) for m in self.methods])
                for j in (0, 1)
            )
            error = np.vstack([means - low, high - means])
            ax.bar(x + offset, means, 0.4, color=colour, label=f"{kind} explanations")
            ax.errorbar(x + offset, means, yerr=np.nan_to_num(error), fmt="none", color="k")
        ax.set_xticks(x, [m if self.means[m]["n"] == self.n_latents else f"{m}\n"
                          f"({self.means[m]['n']} of {self.n_latents} latents)"
                          for m in self.methods], rotation=20)  # fmt: skip
        ax.set_ylabel("mean score over latents")
        ax.set_title("Explanations against shuffled ones (95 % bootstrap intervals)")
        ax.legend()
        return ax

    def histograms(self, figure: Any = None) -> Any:
        """Each method's per-latent scores, true against shuffled, on one (new) figure."""
        from matplotlib.figure import Figure

        columns = min(len(self.methods), 3)
        rows = math.ceil(len(self.methods) / columns)
        figure = figure or Figure(figsize=(3.4 * columns, 2.6 * rows))
        for k, method in enumerate(self.methods):
            ax = figure.add_subplot(rows, columns, k + 1)
            true, shuffled = (
                _finite([r["scores"][method][kind] for r in self.latents])
                for kind in ("score", "shuffled")
            )
            both = np.concatenate([true, shuffled])
            bins = np.histogram_bin_edges(both, bins=15) if len(both) else 15
            ax.hist(true, bins=bins, alpha=0.6, color="C0", label="true")
            ax.hist(shuffled, bins=bins, alpha=0.6, color="C7", label="shuffled")
            ax.set(title=method, xlabel="score", ylabel="latents")
            if k == 0:
                ax.legend()
        figure.tight_layout()
        return figure


def sae_report(
    scores: Sequence[Mapping[str, Any]],
    explanations: Sequence[Any] | None = None,
    cache: LatentCache | None = None,
    *,
    decode: Callable[[int], str] | None = None,
    sampling: Mapping[str, Any] | None = None,
    method: str | None = None,
    n_best: int = 5,
    n_contexts: int = 3,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> SAEReport:
    """Gather the scores of an SAE interpretation run into a report (see the module docstring).

    Parameters
    ----------
    scores : sequence of dict
        Rows as ``sae score`` writes them (one per latent with ``"shuffled": false``, and
        optionally one with ``"shuffled": true``); a method's value is a number (None or NaN:
        missing) or the scorer's result.
    explanations : sequence, optional
        The explanations (rows of ``explanations.jsonl`` or
        :class:`~trustlab.interpret.sae.explain.LatentExplanation` objects): every scored latent
        must have one, equal to its true row's explanation.
    cache : LatentCache, optional
        The latent cache the examples come from; without it no context is shown.
    decode : callable, optional
        Token id -> text (needed with ``cache``).
    sampling : dict, optional
        How the examples were drawn, as ``sae explain`` records it: ``n_train``, ``n_test``,
        ``min_examples``, ``seed`` (latent ``i`` drawn with ``random_state=seed + i``) and any
        other argument of :func:`~trustlab.interpret.sae.examples.latent_examples`.
    method : str, optional
        The method the best and worst latents are chosen by (default: the first in
        :data:`SCORE_KEYS` with a score).
    n_best : int, default 5
        Best and worst latents shown.
    n_contexts : int, default 3
        Test contexts shown per latent (0: none).
    n_bootstrap : int, default 1000
        Draws of the bootstrap over latents.
    random_state : None, int or numpy Generator, default 0

    Returns
    -------
    SAEReport

    Examples
    --------
    >>> rows = [
    ...     {"latent": 0, "shuffled": False, "explanation": "cats", "embedding": 0.9},
    ...     {"latent": 0, "shuffled": True, "explanation": "dates", "embedding": 0.5},
    ...     {"latent": 1, "shuffled": False, "explanation": "dates", "embedding": 0.7},
    ...     {"latent": 1, "shuffled": True, "explanation": "cats", "embedding": 0.4},
    ... ]
    >>> report = sae_report(rows, n_best=1)
    >>> report.best, report.worst, round(report.means["embedding"]["difference"], 3)
    ((0,), (1,), 0.35)
    """
    true, shuffled = _read_rows(scores)
    methods, method = _methods(scores, true, method)
    _check_explanations(explanations, true)
    n_best = check_positive_int(n_best, "n_best")
    n_contexts = check_positive_int(n_contexts, "n_contexts", minimum=0)
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap")
    rng = check_random_state(random_state)
    if cache is not None:
        if not isinstance(cache, LatentCache):
            raise InputError.bad("cache", "a LatentCache (cache_latents) or None", cache)
        if not callable(decode):
            raise InputError.bad("decode", "a callable token id -> text (with a cache)", decode)
        outside = [i for i in true if i >= cache.n_latents]
        if outside:
            raise InputError.bad(
                "cache", f"the cache of the scored latents (it has {cache.n_latents})",
                f"latent {outside[0]}",
            )  # fmt: skip
    draw = _sampling(sampling)

    latents = sorted(true)
    none = {"explanation": None, "values": {}, "intervals": {}}
    table = []
    for i in latents:
        row, control = true[i], shuffled.get(i, none)
        scores = {
            m: {"score": _score(row, m), "interval": row["intervals"].get(m, _NO_INTERVAL),
                "shuffled": _score(control, m),
                "shuffled_interval": control["intervals"].get(m, _NO_INTERVAL)}
            for m in methods
        }  # fmt: skip
        table.append({"latent": i, "explanation": row["explanation"],
                      "shuffled_explanation": control["explanation"], "scores": scores})  # fmt: skip
    means = {m: {**_means(table, m, n_bootstrap, rng), "no_score": _no_score(true, m)}
             for m in methods}  # fmt: skip
    if "intervention" in means:  # a strength that never reached the KL target scores ~0
        means["intervention"]["uncalibrated"] = sum(r["calibrated"] is False for r in true.values())
    correlations = tuple(
        _spearman(table, a, b) for k, a in enumerate(methods) for b in methods[k + 1 :]
    )
    by_quantile = {m: found for m in methods if (found := _by_quantile(true, shuffled, m))}
    order = sorted(
        (i for i in latents if np.isfinite(_score(true[i], method))),
        key=lambda i: (-_score(true[i], method), i),
    )
    best = tuple(order[: min(n_best, math.ceil(len(order) / 2))])
    worst = tuple(sorted(order[len(best) :], key=lambda i: (_score(true[i], method), i))[:n_best])
    contexts = {
        i: _contexts(cache, i, decode, draw, n_contexts)
        for i in dict.fromkeys(best + worst)
        if cache is not None and n_contexts
    }
    return SAEReport(
        methods=methods,
        rank_by=method,
        n_latents=len(latents),
        means=means,
        correlations=correlations,
        by_quantile=by_quantile,
        latents=tuple(table),
        best=best,
        worst=worst,
        contexts=contexts,
        n_bootstrap=n_bootstrap,
    )


# ---------------------------------------------------------------------------- reading the rows


def _keys(scores: Any) -> Any:
    try:
        return sorted({k for r in scores for k in r})
    except TypeError:
        return scores


def _read_rows(scores: Any) -> tuple[dict[int, dict], dict[int, dict]]:
    """The true and the shuffled rows by latent, each ``{explanation, values, intervals,
    examples}``."""
    if isinstance(scores, (str, bytes, Mapping)) or not isinstance(scores, Sequence):
        raise InputError.bad("scores", "a list of score rows (dicts)", scores)
    if not scores:
        raise InputError.bad("scores", "at least one score row", scores)
    true: dict[int, dict] = {}
    shuffled: dict[int, dict] = {}
    for k, row in enumerate(scores):
        name = f"scores[{k}]"
        if not isinstance(row, Mapping):
            raise InputError.bad(name, "a dict (a row of scores.jsonl)", row)
        latent = row.get("latent")
        if isinstance(latent, bool) or not isinstance(latent, (int, np.integer)) or latent < 0:
            raise InputError.bad(f"{name}['latent']", "a latent index (an integer >= 0)", latent)
        control = row.get("shuffled", False)
        if not isinstance(control, (bool, np.bool_)):
            raise InputError.bad(f"{name}['shuffled']", "true or false", control)
        into = shuffled if control else true
        if int(latent) in into:
            kind = "shuffled" if control else "true"
            raise InputError.bad("scores", f"one {kind} row per latent", f"two for latent {latent}")
        into[int(latent)] = _read_row(row, name)
    alone = sorted(set(shuffled) - set(true))
    if alone:
        raise InputError.bad(
            "scores", "a true-explanation row for every latent with a shuffled one",
            f"only a shuffled row for latent {alone[0]}",
        )  # fmt: skip
    return true, shuffled


def _read_row(row: Mapping[str, Any], name: str) -> dict:
    values: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    examples: dict[str, dict[str, np.ndarray]] = {}
    explanation = row.get("explanation")
    for key in SCORE_KEYS:
        if key not in row or key in values:
            continue
        value = row[key]
        if isinstance(value, ClassificationScore):
            values[key], intervals[key] = value.balanced_accuracy, tuple(value.interval)
            if value.answer == "logprob" and f"{key}_auroc" not in row:
                values[f"{key}_auroc"] = value.auroc
            examples[key] = {"quantiles": value.quantiles, "predicted": value.predicted}
            explanation = explanation if explanation is not None else value.explanation
        elif isinstance(value, RankingScore):
            values[key], intervals[key] = value.auroc, tuple(value.interval)
            examples[key] = {"quantiles": value.quantiles, "scores": value.scores}
            explanation = explanation if explanation is not None else value.explanation
        else:
            values[key] = _number(value, f"{name}[{key!r}]")
            if row.get(f"{key}_interval") is not None:
                intervals[key] = _pair(row[f"{key}_interval"], f"{name}['{key}_interval']")
            if row.get(f"{key}_examples") is not None:
                examples[key] = _examples(row[f"{key}_examples"], key, f"{name}['{key}_examples']")
    if explanation is not None and not isinstance(explanation, str):
        raise InputError.bad(f"{name}['explanation']", "a string", explanation)
    calibrated = row.get("intervention_calibrated")
    if calibrated is not None and not isinstance(calibrated, (bool, np.bool_)):
        raise InputError.bad(f"{name}['intervention_calibrated']", "true, false or None",
                             calibrated)  # fmt: skip
    calibrated = None if calibrated is None else bool(calibrated)
    error = row.get("intervention_error")  # why `sae score` gave no intervention score
    return {"explanation": explanation or "", "values": values, "intervals": intervals,
            "examples": examples, "calibrated": calibrated,
            "intervention_error": None if error is None else str(error)}  # fmt: skip


def _number(value: Any, name: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError.bad(name, "a number or None", value)
    return float(value)


def _pair(value: Any, name: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise InputError.bad(name, "a pair [low, high]", value)
    return (_number(value[0], name), _number(value[1], name))


def _examples(value: Any, key: str, name: str) -> dict[str, np.ndarray]:
    wanted = "predicted" if key in _ACCURACY else "scores"
    if not isinstance(value, Mapping) or "quantiles" not in value or wanted not in value:
        raise InputError.bad(name, f"a dict with per-example 'quantiles' and '{wanted}'", value)
    try:
        quantiles = np.asarray(value["quantiles"], dtype=np.int64)
        other = np.asarray(
            [math.nan if v is None else v for v in value[wanted]], dtype=np.float64
        )  # fmt: skip
    except (TypeError, ValueError):
        raise InputError.bad(name, "numbers per example", value) from None
    if quantiles.ndim != 1 or quantiles.shape != other.shape:
        raise InputError.bad(name, f"as many 'quantiles' as '{wanted}'", value)
    return {"quantiles": quantiles, wanted: other}


def _check_explanations(explanations: Any, true: dict[int, dict]) -> None:
    if explanations is None:
        return
    if isinstance(explanations, (str, bytes, Mapping)) or not isinstance(explanations, Sequence):
        raise InputError.bad("explanations", "a list of explanations (rows or LatentExplanation)",
                             explanations)  # fmt: skip
    texts: dict[int, str] = {}
    for k, item in enumerate(explanations):
        latent = item.get("latent") if isinstance(item, Mapping) else getattr(item, "latent", None)
        text = item.get("text") if isinstance(item, Mapping) else getattr(item, "text", None)
        if (
            isinstance(latent, bool)
            or not isinstance(latent, (int, np.integer))
            or not (isinstance(text, str))
        ):
            raise InputError.bad(f"explanations[{k}]", "a latent and its text", item)
        texts[int(latent)] = text
    for latent, row in true.items():
        if latent not in texts:
            raise InputError.bad(
                "explanations", "an explanation of every scored latent",
                f"none for latent {latent}",
            )  # fmt: skip
        if row["explanation"] and row["explanation"] != texts[latent]:
            raise InputError.bad(
                "explanations", f"the explanation latent {latent} was scored with "
                f"({row['explanation']!r})", texts[latent],
            )  # fmt: skip
        row["explanation"] = row["explanation"] or texts[latent]


def _sampling(sampling: Any) -> dict[str, Any]:
    if sampling is None:
        return {}
    if not isinstance(sampling, Mapping) or any(k not in _SAMPLING for k in sampling):
        raise InputError.bad(
            "sampling", "a dict of latent_examples arguments (" + ", ".join(_SAMPLING) + ")",
            sampling,
        )  # fmt: skip
    return dict(sampling)


# ---------------------------------------------------------------------------- the numbers


def report_method(scores: Sequence[Mapping[str, Any]], method: str | None = None) -> str:
    """The method :func:`sae_report` ranks the latents of ``scores`` by: ``method`` checked to
    be one with a score, or the first scored in :data:`SCORE_KEYS` (``sae report`` checks its
    ``--method`` with it before the tokenizer loads)."""
    return _methods(scores, _read_rows(scores)[0], method)[1]


def _methods(scores: Any, true: dict[int, dict], method: str | None) -> tuple[tuple, str]:
    """The methods the true rows hold, and the one to rank by (checked)."""
    methods = tuple(k for k in SCORE_KEYS if any(k in r["values"] for r in true.values()))
    if not methods:
        raise InputError.bad("scores", "rows with at least one score (" + ", ".join(SCORE_KEYS)
                             + ")", _keys(scores))  # fmt: skip
    ranked = [m for m in methods if any(np.isfinite(_score(true[i], m)) for i in true)]
    if method is None:
        if not ranked:
            raise InputError.bad("scores", "at least one score that is not missing", "none")
        method = ranked[0]
    elif method not in ranked:
        raise InputError.bad("method", "one of the scored methods: " + ", ".join(ranked), method)
    return methods, method


def _score(row: dict, method: str) -> float:
    return float(row["values"].get(method, math.nan))


def no_score_reason(quantiles: Any) -> str:
    """Why a latent has no detection, fuzzing, embedding or surprisal score (NaN), from the
    activation quantiles of the examples shown (-1: non-activating; ``sae score`` rows hold
    them as ``{method}_examples``): none non-activating among them means the latent fires in
    every context, so there is nothing to tell its examples from."""
    shown = np.asarray([] if quantiles is None else quantiles)
    if len(shown) and not (shown < 0).any():
        return "no non-activating example (the latent fires in every context)"
    return "too few examples of a kind shown, or no answer parsed"


def _no_score(true: dict[int, dict], method: str) -> dict[str, int]:
    """Latents without a true score of ``method``: reason -> how many."""
    out: dict[str, int] = {}
    for row in true.values():
        if not np.isfinite(_score(row, method)):
            shown = row["examples"].get(method.removesuffix("_auroc"), {}).get("quantiles")
            # intervention shows no examples: its reason is the row's, not the classifiers'
            reason = (
                (row["intervention_error"] or "no score")
                if method == "intervention"
                else no_score_reason(shown)
            )
            out[reason] = out.get(reason, 0) + 1
    return out


def uncalibrated_text(n: int, n_latents: int) -> str:
    """What ``means["intervention"]["uncalibrated"]`` means, for the summary and the page."""
    return (
        f"{n} of {n_latents} latents' intervention strength did not reach the calibration's "
        "KL target (0.5 nats +- 10 %; intervention_calibrated false in the rows): their "
        "intervention scores, in the means, are at an uncalibrated strength"
    )


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def _finite(values: Sequence[float]) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array[np.isfinite(array)]


def _bootstrap_mean(values: np.ndarray, n: int, rng: np.random.Generator) -> tuple[float, float]:
    if len(values) < 2:
        return (math.nan, math.nan)
    draws = values[rng.integers(0, len(values), size=(n, len(values)))].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return (float(low), float(high))


def _means(table: list[dict], method: str, n: int, rng: np.random.Generator) -> dict[str, Any]:
    true, shuffled = (
        np.array([r["scores"][method][k] for r in table]) for k in ("score", "shuffled")
    )
    paired = np.isfinite(true) & np.isfinite(shuffled)
    out: dict[str, Any] = {}
    for kind, values in (
        ("true", true[np.isfinite(true)]),
        ("shuffled", shuffled[np.isfinite(shuffled)]),
        ("difference", true[paired] - shuffled[paired]),
    ):
        out[kind] = float(values.mean()) if len(values) else math.nan
        out[f"{kind}_interval"] = _bootstrap_mean(values, n, rng)
    out.update(n=int(np.isfinite(true).sum()), n_shuffled=int(np.isfinite(shuffled).sum()),
               n_paired=int(paired.sum()))  # fmt: skip
    return out


def _spearman(table: list[dict], a: str, b: str) -> dict[str, Any]:
    from scipy.stats import spearmanr

    x, y = (np.array([r["scores"][m]["score"] for r in table]) for m in (a, b))
    both = np.isfinite(x) & np.isfinite(y)
    rho = p_value = math.nan
    if both.sum() >= 3:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant score: rho is undefined (NaN)
            found = spearmanr(x[both], y[both])
        rho, p_value = float(found.statistic), float(found.pvalue)
    return {"a": a, "b": b, "rho": rho, "p_value": p_value, "n": int(both.sum())}


def _by_quantile(true: dict, shuffled: dict, method: str) -> dict[str, Any] | None:
    if method not in _ACCURACY + _RANKING:
        return None
    kinds = {"true": true, "shuffled": shuffled}
    found = [r["examples"][method] for rows in kinds.values() for r in rows.values()
             if method in r["examples"]]  # fmt: skip
    if not found:
        return None
    levels = sorted({int(q) for e in found for q in e["quantiles"] if q >= 0})
    if method in _ACCURACY:
        labels: list[Any] = ["non-activating", *levels]
        out: dict[str, Any] = {"measure": "accuracy", "quantiles": labels}
        for kind, rows in kinds.items():
            right = dict.fromkeys(labels, 0)
            seen = dict.fromkeys(labels, 0)
            for e in (r["examples"][method] for r in rows.values() if method in r["examples"]):
                answered = np.isfinite(e["predicted"])
                q, said = e["quantiles"][answered], e["predicted"][answered] > 0.5
                for label in labels:
                    at = q < 0 if label == "non-activating" else q == label
                    seen[label] += int(at.sum())
                    right[label] += int((said[at] == (q[at] >= 0)).sum())
            out[kind] = [right[x] / seen[x] if seen[x] else math.nan for x in labels]
            out[f"n_{kind}"] = [seen[x] for x in labels]
        out["n"] = out.pop("n_true")
        return out
    out = {"measure": "auroc", "quantiles": levels}
    for kind, rows in kinds.items():
        per_level: dict[int, list[float]] = {q: [] for q in levels}
        for e in (r["examples"][method] for r in rows.values() if method in r["examples"]):
            ok = np.isfinite(e["scores"])
            q, s = e["quantiles"][ok], e["scores"][ok]
            for level in levels:
                at, below = s[q == level], s[q < 0]
                value = _auroc(
                    np.r_[at, below], np.r_[np.ones(len(at), bool), np.zeros(len(below), bool)]
                )
                if np.isfinite(value):
                    per_level[level].append(value)
        out[kind] = [float(np.mean(v)) if v else math.nan for v in per_level.values()]
        out[f"n_{kind}"] = [len(v) for v in per_level.values()]
    out["n"] = out.pop("n_true")
    return out


def _contexts(
    cache: LatentCache, latent: int, decode: Callable[[int], str], sampling: dict, n: int
) -> list[dict[str, Any]]:
    """Up to ``n`` held-out test contexts of ``latent``, spread from its strongest to its
    weakest (its training examples when it has no test example)."""
    from trustlab.interpret.sae.examples import latent_examples

    options = {k: v for k, v in sampling.items() if k != "seed"}
    examples = latent_examples(
        cache, latent, random_state=int(sampling.get("seed", 0)) + latent, **options
    )
    pool = sorted(examples.test or examples.train, key=lambda e: -e.max_activation)
    picked = sorted(set(np.linspace(0, len(pool) - 1, min(n, len(pool))).round().astype(int)))
    return [
        {
            "tokens": [decode(int(t)) for t in pool[j].tokens],
            "activations": [float(a) for a in pool[j].activations],
            "max_activation": examples.max_activation,
            "quantile": pool[j].quantile,
        }
        for j in picked
    ]


def _fmt(value: Any) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3f}"


def _span(interval: Any) -> str:
    low, high = interval
    return f"[{_fmt(low)}, {_fmt(high)}]"

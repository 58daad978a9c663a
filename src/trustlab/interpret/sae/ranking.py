"""Embedding and surprisal scores of a latent's explanation (the spec's two ranking scorers).

Both give every test and non-activating example a number and report the AUROC of that number
for activating against non-activating examples (with a percentile bootstrap interval):

- **embedding**: the cosine between the embedding of ``QUERY + explanation`` and that of the
  example's text (all-MiniLM-L6-v2 by default, shipped offline; the instruct prefix means
  nothing to MiniLM and is kept for parity with the authors' setup);
- **surprisal**: how much the explanation helps a language model predict the example: a fixed
  few-shot prompt of (description, sentences) blocks, then ``Description: <explanation>
  Sentences:`` followed by the example's text; the score is the example's total
  log-probability with the explanation minus that with a neutral description ("various
  unrelated sentences"), in nats (equivalently, the neutral cross-entropy minus the explained
  one, summed over the example's tokens).

``query_prefix`` (embedding) and ``prompts`` (surprisal) replace our wording; the spec's
parity checks pass the authors' query prefix and few-shot prompt through them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_positive_int, check_random_state
from trustlab._numerics import auroc_rows
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import BackendError, InputError
from trustlab.interpret.sae.examples import LatentExamples

__all__ = [
    "RankingScore",
    "embedding_score",
    "surprisal_score",
    "bootstrap_aurocs",
    "QUERY",
    "NEUTRAL",
]

#: The embedding query's prefix (the authors' instruct prefix; MiniLM ignores its meaning).
QUERY = "instruct: retrieve sentences related to the explanation. query: "
#: The surprisal scorer's neutral description.
NEUTRAL = "various unrelated sentences"
_FEW_SHOT = (
    "Description: the names of fruits\n"
    "Sentences: She bought apples, pears and a ripe mango at the market.\n\n"
    "Description: past-tense verbs\n"
    "Sentences: He walked home, cooked dinner and watched the rain.\n\n"
    "Description: numbers written as digits\n"
    "Sentences: The train leaves at 7 and arrives 45 minutes later.\n\n"
)


@dataclass(frozen=True)
class RankingScore(Result):
    """An embedding or surprisal score of one latent's explanation.

    Attributes
    ----------
    latent : int
    method : {"embedding", "surprisal"}
    explanation : str
    auroc : float
        Of the per-example scores, activating (positive) against non-activating (NaN when a
        class is empty).
    interval : tuple of float
        95 % percentile bootstrap interval of the AUROC.
    n_activating, n_not_active : int
    scores, activating, quantiles : ndarray
        Per example (test examples first, then non-activating ones); not in ``to_dict()``.
    """

    latent: int
    method: str
    explanation: str
    auroc: float
    interval: tuple[float, float]
    n_activating: int
    n_not_active: int
    scores: np.ndarray = internal_field(default=None)
    activating: np.ndarray = internal_field(default=None)
    quantiles: np.ndarray = internal_field(default=None)

    figure_name = "ranking_scores.png"

    def summary(self) -> str:
        low, high = self.interval
        return (
            f"{self.method} of latent {self.latent} ({self.explanation!r}): AUROC "
            f"{self.auroc:.3f} [{low:.3f}, {high:.3f}] over {self.n_activating} activating and "
            f"{self.n_not_active} non-activating examples"
        )

    def plot(self, ax: Any = None) -> Any:
        """The per-example scores of the two classes."""
        ax = new_axes(ax)
        bins = np.histogram_bin_edges(self.scores, bins=20)
        ax.hist(self.scores[self.activating], bins=bins, alpha=0.6, label="activating")
        ax.hist(self.scores[~self.activating], bins=bins, alpha=0.6, label="non-activating")
        ax.set_xlabel("cosine" if self.method == "embedding" else "log-probability gain (nats)")
        ax.set_ylabel("examples")
        ax.set_title(f"{self.method}, latent {self.latent}: AUROC {self.auroc:.3f}")
        ax.legend()
        return ax


def embedding_score(
    examples: LatentExamples,
    explanation: str,
    decode: Callable[[int], str],
    *,
    embedder: Any = None,
    query_prefix: str = QUERY,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> RankingScore:
    """Embedding score: AUROC of the cosine between ``query_prefix + explanation`` and each
    example.

    ``embedder``: None (the shipped MiniLM) or anything with ``encode(list of str)``.
    ``query_prefix``: the text before the explanation in the query (default :data:`QUERY`).
    """
    from trustlab.llm.embeddings import embed_texts

    texts, activating, quantiles = _check(examples, explanation, decode)
    if not isinstance(query_prefix, str):
        raise InputError.bad("query_prefix", "a string", query_prefix)
    # each distinct text embedded once: an embedder's batches pad alike texts differently, so
    # the same text in both classes came out up to 1e-7 apart and its tie counted as a win
    distinct = list(dict.fromkeys(texts))
    rows = embed_texts([query_prefix + explanation, *distinct], embedder)
    where = {text: i for i, text in enumerate(distinct)}
    scores = (rows[1:] @ rows[0])[np.asarray([where[t] for t in texts], dtype=np.int64)]
    return _result("embedding", examples, explanation, scores, activating, quantiles,
                   n_bootstrap, random_state)  # fmt: skip


def surprisal_prompts(explanation: str) -> tuple[str, str]:
    """The explained and the neutral prompt the example texts continue."""
    return (
        f"{_FEW_SHOT}Description: {explanation}\nSentences:",
        f"{_FEW_SHOT}Description: {NEUTRAL}\nSentences:",
    )


def surprisal_score(
    examples: LatentExamples,
    explanation: str,
    model: Any,
    decode: Callable[[int], str],
    *,
    batch_size: int = 8,
    share_prefix: bool = True,
    prompts: Callable[[str], tuple[str, str]] | None = None,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> RankingScore:
    """Surprisal score: AUROC of the log-probability each example gains from the explanation.

    ``model``: a :class:`~trustlab.llm.LocalModel` (its ``logprobs``); the example's text is
    the continuation, with one leading space. ``share_prefix`` (default True): the prompt is
    run once per batch (``LocalModel.logprobs``; equal up to float32 rounding).
    ``prompts``: optional ``explanation ->
    (explained prompt, neutral prompt)`` instead of :func:`surprisal_prompts`.
    """
    if not hasattr(model, "logprobs"):
        raise InputError.bad("model", "a trustlab.llm.LocalModel (with logprobs)", model)
    texts, activating, quantiles = _check(examples, explanation, decode)
    batch_size = check_positive_int(batch_size, "batch_size")
    if prompts is not None and not callable(prompts):
        raise InputError.bad("prompts", "a callable explanation -> (explained, neutral) or None",
                             prompts)  # fmt: skip
    pair = (prompts or surprisal_prompts)(explanation)
    if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
        raise InputError.bad("prompts", "a callable returning two prompt strings", pair)
    explained, neutral = pair
    continuations = [" " + " ".join(t.split()) for t in texts]
    n = len(continuations)
    totals = _distinct_logprobs(model, [explained] * n + [neutral] * n, continuations * 2,
                               batch_size=batch_size, share_prefix=share_prefix)  # fmt: skip
    scores = totals[:n] - totals[n:]
    return _result("surprisal", examples, explanation, scores, activating, quantiles,
                   n_bootstrap, random_state)  # fmt: skip


def _distinct_logprobs(model: Any, prompts: list[str], continuations: list[str], **options: Any
                      ) -> np.ndarray:  # fmt: skip
    """``model.logprobs(prompts, continuations, **options)`` with each distinct (prompt,
    continuation) pair computed once, so equal pairs get equal values: with ``share_prefix`` a
    row's float32 rounding depends on its batch, and an activating and a non-activating example
    of the same text (a tie, worth half a pair in the AUROC) came out up to 5e-8 apart."""
    rows: dict[tuple[str, str], int] = {}
    which = [rows.setdefault(pair, len(rows)) for pair in zip(prompts, continuations, strict=True)]
    firsts, rests = zip(*rows, strict=True) if rows else ((), ())
    totals = model.logprobs(list(firsts), list(rests), **options)
    return np.asarray(totals, dtype=np.float64)[np.asarray(which, dtype=np.int64)]


def _check(
    examples: Any, explanation: Any, decode: Any
) -> tuple[list[str], np.ndarray, np.ndarray]:
    if not isinstance(examples, LatentExamples):
        raise InputError.bad("examples", "LatentExamples (latent_examples)", examples)
    if not isinstance(explanation, str) or not explanation.strip():
        raise InputError.bad("explanation", "a non-empty string", explanation)
    if not callable(decode):
        raise InputError.bad("decode", "a callable token id -> text", decode)
    shown = list(examples.test) + list(examples.not_active)
    if not shown:
        raise InputError.bad("examples", "test or non-activating examples", examples.summary())
    texts = ["".join(decode(int(t)) for t in e.tokens) for e in shown]
    activating = np.array([e.quantile is not None for e in shown], dtype=bool)
    quantiles = np.array([-1 if e.quantile is None else e.quantile for e in shown], np.int64)
    return texts, activating, quantiles


def _check_finite(scores: np.ndarray, source: str, what: str) -> None:
    """A NaN or infinite per-example score (a model's NaN or -inf log-probabilities) made
    scikit-learn's AUROC raise a bare ValueError ("Input contains NaN")."""
    bad = int((~np.isfinite(scores)).sum())
    if bad:
        raise BackendError(
            f"{source}: its {what} scores are not finite (NaN or infinite) for {bad} of "
            f"{len(scores)} examples; a model with broken weights or outputs gives such values"
        )


def _auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    if positive.all() or not positive.any():
        return math.nan
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(positive, scores))


def bootstrap_aurocs(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """The AUROC of every row of ``scores`` (draws x examples) against the same row of
    ``positive`` at once, by the rank-sum (Mann-Whitney) formula with average ranks for ties,
    which is scikit-learn's ``roc_auc_score``; NaN for a row with one class only."""
    return auroc_rows(positive, scores)


def _result(
    method: str,
    examples: LatentExamples,
    explanation: str,
    scores: np.ndarray,
    activating: np.ndarray,
    quantiles: np.ndarray,
    n_bootstrap: int,
    random_state: Any,
) -> RankingScore:
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap")
    rng = check_random_state(random_state)
    scores = np.asarray(scores, dtype=np.float64)
    _check_finite(scores, "embedder" if method == "embedding" else "model", method)
    interval = (math.nan, math.nan)
    if activating.sum() >= 2 and (~activating).sum() >= 2:
        rows = rng.integers(0, len(scores), (n_bootstrap, len(scores)))
        draws = bootstrap_aurocs(scores[rows], activating[rows])
        draws = draws[~np.isnan(draws)]
        if len(draws):  # none when every draw held one class only (few examples, few draws)
            low, high = np.percentile(draws, [2.5, 97.5])
            interval = (float(low), float(high))
    return RankingScore(
        latent=examples.latent,
        method=method,
        explanation=explanation,
        auroc=_auroc(scores, activating),
        interval=interval,
        n_activating=int(activating.sum()),
        n_not_active=int((~activating).sum()),
        scores=scores,
        activating=activating,
        quantiles=quantiles,
    )

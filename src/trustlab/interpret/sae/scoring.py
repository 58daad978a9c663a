"""Detection and fuzzing scores of a latent's explanation (the spec's two classification scorers).

Both show a scorer model (any model with trustlab's ``generate``) the explanation and a batch
of examples, and ask for a Python list of 0/1, one per example:

- **detection**: the latent's test examples (activating) and its non-activating examples,
  shuffled together and shown without marks; 1 = "the feature described is present";
- **fuzzing**: every example shown with marked tokens; activating examples have their truly
  active tokens marked (above ``threshold`` x the example's largest activation), the
  non-activating ones ``n_incorrect`` random tokens, where ``n_incorrect`` is the mean number
  of non-zero tokens of the activating test examples rounded up (the window's centre, index
  ``ctx_len - ctx_len // 4``, always among them when the window reaches it); 1 = "the marked
  tokens are where the feature is".

An example counts as correct when the answer equals whether it is activating. A batch whose
answer holds no list of as many 0/1 values as examples fails as a whole: its examples are left
out of the metrics and counted in ``n_failed``.

``answer="logprob"`` reads the answer from token probabilities instead of generated text (for
small local models, which rarely write a well-formed list): each example is its own prompt,
ending in "Answer (1 or 0):", and ``P = p("1") / (p("0") + p("1"))`` from the scorer's
``logprobs`` (a :class:`~trustlab.llm.LocalModel`; the chat template when it has one); the
example is called activating when ``P > 0.5``, nothing fails to parse, and the AUROC of ``P``
is reported too. Per latent: the confusion matrix, balanced
accuracy ((TPR + TNR) / 2, what the authors' code calls "accuracy"), accuracy, precision,
recall, F1, and a percentile bootstrap interval of the balanced accuracy over examples.

``prompt_builder`` replaces our prompt wording (the spec's parity check passes the authors'
prompt functions); it gets the explanation and the batch's example texts and returns the
prompt. ``wrong_positions`` (fuzzing) replaces our choice of the wrongly marked tokens: the
authors' code re-seeds Python's ``random`` with 22 before every non-activating window, so all
windows of one length get the same wrong tokens; ours are drawn per window from
``random_state``. The parity check passes the authors' rule through it.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_choice, check_in_range, check_positive_int, check_random_state
from trustlab._results import Result, internal_field, new_axes
from trustlab.errors import InputError
from trustlab.interpret.sae.examples import Example, LatentExamples
from trustlab.interpret.sae.explain import highlight
from trustlab.interpret.sae.ranking import _check_finite

__all__ = ["ClassificationScore", "detection_score", "fuzzing_score", "METHODS", "ANSWERS"]

METHODS = ("detection", "fuzzing")
#: How the scorer's answer is read: a generated Python list, or the probabilities of "1"/"0".
ANSWERS = ("list", "logprob")

_DEMOS = {
    "detection": (
        "Feature: words about the weather\n"
        "Excerpt 1: It rained all night and the wind was cold.\n"
        "Excerpt 2: She paid the bill at the bank.\n"
        "Answer: [1, 0]"
    ),
    "fuzzing": (
        "Feature: words about the weather\n"
        "Excerpt 1: It <<rained>> all night and the <<wind>> was cold.\n"
        "Excerpt 2: She <<paid>> the bill at the bank.\n"
        "Answer: [1, 0]"
    ),
}
_TASK = {
    "detection": "answer 1 if the feature is present in it and 0 if it is not",
    "fuzzing": (
        "some tokens are marked like <<this>>; answer 1 if the marked tokens are where the "
        "feature is and 0 if they are not"
    ),
}


@dataclass(frozen=True)
class ClassificationScore(Result):
    """A detection or fuzzing score of one latent's explanation.

    Attributes
    ----------
    latent : int
    method : {"detection", "fuzzing"}
    explanation : str
    n_examples, n_failed : int
        Examples shown, and those left out because their batch's answer did not parse.
    tp, tn, fp, fn : int
        The confusion matrix of the parsed examples (positive = activating).
    balanced_accuracy, accuracy, precision, recall, f1 : float
        NaN where undefined (no parsed example, no positive prediction...).
    interval : tuple of float
        95 % percentile bootstrap interval of the balanced accuracy (NaN when fewer than two
        parsed examples of each class).
    answer : {"list", "logprob"}
    auroc : float
        AUROC of ``P("1")`` (``answer="logprob"``; NaN otherwise).
    activating, predicted, quantiles : ndarray
        Per parsed example: whether it is activating, the answer, and its activation quantile
        (-1 for non-activating ones); not in ``to_dict()``.
    """

    latent: int
    method: str
    explanation: str
    n_examples: int
    n_failed: int
    tp: int
    tn: int
    fp: int
    fn: int
    balanced_accuracy: float
    accuracy: float
    precision: float
    recall: float
    f1: float
    interval: tuple[float, float]
    answer: str = "list"
    auroc: float = math.nan
    activating: np.ndarray = internal_field(default=None)
    predicted: np.ndarray = internal_field(default=None)
    quantiles: np.ndarray = internal_field(default=None)
    probabilities: np.ndarray = internal_field(default=None)

    figure_name = "score_by_quantile.png"

    def summary(self) -> str:
        low, high = self.interval
        auroc = f", AUROC {self.auroc:.3f}" if self.answer == "logprob" else ""
        return (
            f"{self.method} of latent {self.latent} ({self.explanation!r}): balanced accuracy "
            f"{self.balanced_accuracy:.3f} [{low:.3f}, {high:.3f}], F1 {self.f1:.3f}{auroc}; "
            f"{self.n_examples - self.n_failed} of {self.n_examples} examples parsed"
        )

    def plot(self, ax: Any = None) -> Any:
        """Share of activating examples called activating, by activation quantile."""
        ax = new_axes(ax)
        quantiles = sorted(set(self.quantiles[self.quantiles >= 0].tolist()))
        recall = [self.predicted[self.quantiles == q].mean() for q in quantiles]
        ax.bar([str(q) for q in quantiles], recall)
        ax.axhline(1 - self.predicted[~self.activating].mean() if (~self.activating).any()
                   else np.nan, color="grey", linestyle="--", label="non-activating: correct")  # fmt: skip
        ax.set_ylim(0, 1)
        ax.set_xlabel("activation quantile (0 = weakest)")
        ax.set_ylabel("called activating")
        ax.set_title(f"{self.method}, latent {self.latent}")
        ax.legend()
        return ax


def detection_score(
    examples: LatentExamples,
    explanation: str,
    scorer: Any,
    decode: Callable[[int], str],
    *,
    batch_size: int = 5,
    answer: str = "list",
    prompt_builder: Callable[[str, list[str]], str] | None = None,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> ClassificationScore:
    """Detection: can ``scorer`` tell activating from non-activating examples by the
    explanation? (See the module docstring.)

    Parameters
    ----------
    examples : LatentExamples
        Its ``test`` and ``not_active`` examples are shown.
    explanation : str
    scorer : language model
        Anything with ``name`` and trustlab's ``generate``.
    decode : callable
        Token id -> text.
    batch_size : int, default 5
        Examples per prompt (``answer="list"``).
    answer : {"list", "logprob"}, default "list"
        Read a generated list, or the probabilities of "1" and "0" (module docstring).
    prompt_builder : callable, optional
        ``(explanation, example texts) -> prompt`` instead of ours.
    n_bootstrap : int, default 1000
    random_state : None, int or numpy Generator, default 0
        Seeds the shuffle and the bootstrap.
    """
    return _score(
        "detection", examples, explanation, scorer, decode, batch_size, answer, prompt_builder,
        n_bootstrap, random_state, 0.3,
    )  # fmt: skip


def fuzzing_score(
    examples: LatentExamples,
    explanation: str,
    scorer: Any,
    decode: Callable[[int], str],
    *,
    threshold: float = 0.3,
    batch_size: int = 5,
    answer: str = "list",
    prompt_builder: Callable[[str, list[str]], str] | None = None,
    wrong_positions: Callable[[Example, int], Sequence[int]] | None = None,
    n_bootstrap: int = 1000,
    random_state: Any = 0,
) -> ClassificationScore:
    """Fuzzing: can ``scorer`` tell correctly marked examples from wrongly marked ones by the
    explanation? Parameters as :func:`detection_score`, and ``threshold`` (share of an
    example's largest activation above which a token is marked) and ``wrong_positions``:
    optional ``(non-activating example, n_incorrect) -> token indices to mark`` instead of the
    window's centre plus random others drawn from ``random_state`` (distinct indices into the
    example's tokens)."""
    return _score(
        "fuzzing", examples, explanation, scorer, decode, batch_size, answer, prompt_builder,
        n_bootstrap, random_state, threshold, wrong_positions,
    )  # fmt: skip


def render_one(method: str, explanation: str, text: str) -> str:
    """Our prompt for one example read by probabilities: the task, the explanation, the
    example, and "Answer (1 or 0):"."""
    method = check_choice(method, "method", METHODS)
    return (
        f"A feature of a language model is described below. For the excerpt, {_TASK[method]}.\n\n"
        f"Feature: {explanation}\nExcerpt: {' '.join(text.split())}\nAnswer (1 or 0):"
    )


def render(method: str, explanation: str, texts: Sequence[str]) -> str:
    """Our prompt for one batch: the task, one demonstration, the explanation, the examples."""
    method = check_choice(method, "method", METHODS)
    lines = [
        f"A feature of a language model is described below. For each excerpt, {_TASK[method]}. "
        f"Reply with a Python list of {len(texts)} numbers (0 or 1), one per excerpt, in order.",
        "",
        "Example:",
        _DEMOS[method],
        "",
        f"Feature: {explanation}",
    ]
    lines += [f"Excerpt {i}: {' '.join(t.split())}" for i, t in enumerate(texts, 1)]
    lines.append("Answer:")
    return "\n".join(lines)


def parse_labels(answer: str, n: int) -> list[int] | None:
    """The last bracketed list of ``n`` values, each 0 or 1, in ``answer``; None otherwise."""
    for found in reversed(re.findall(r"\[([^\[\]]*)\]", answer)):
        items = [x.strip().strip("'\"") for x in found.split(",") if x.strip()]
        if len(items) == n and all(x in ("0", "1") for x in items):
            return [int(x) for x in items]
    return None


def _score(
    method: str,
    examples: LatentExamples,
    explanation: str,
    scorer: Any,
    decode: Callable[[int], str],
    batch_size: int,
    answer: str,
    prompt_builder: Callable[[str, list[str]], str] | None,
    n_bootstrap: int,
    random_state: Any,
    threshold: float,
    wrong_positions: Callable[[Example, int], Sequence[int]] | None = None,
) -> ClassificationScore:
    if not isinstance(examples, LatentExamples):
        raise InputError.bad("examples", "LatentExamples (latent_examples)", examples)
    if not isinstance(explanation, str) or not explanation.strip():
        # as the embedding, surprisal and intervention scorers: an empty one scored 0.5
        raise InputError.bad("explanation", "a non-empty string", explanation)
    answer = check_choice(answer, "answer", ANSWERS)
    if answer == "list" and (not hasattr(scorer, "generate") or not hasattr(scorer, "name")):
        raise InputError.bad("scorer", "a language model with name and generate", scorer)
    if answer == "logprob" and not hasattr(scorer, "logprobs"):
        raise InputError.bad("scorer", "a trustlab.llm.LocalModel (logprobs) for answer='logprob'",
                             scorer)  # fmt: skip
    if not callable(decode):
        raise InputError.bad("decode", "a callable token id -> text", decode)
    if prompt_builder is not None and not callable(prompt_builder):
        raise InputError.bad("prompt_builder", "a callable or None", prompt_builder)
    if wrong_positions is not None and not callable(wrong_positions):
        raise InputError.bad("wrong_positions", "a callable or None", wrong_positions)
    batch_size = check_positive_int(batch_size, "batch_size")
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap")
    threshold = check_in_range(threshold, "threshold", 0.0, 1.0, high_open=True)
    rng = check_random_state(random_state)
    shown = [(e, True) for e in examples.test] + [(e, False) for e in examples.not_active]
    if not shown:
        raise InputError.bad(
            "examples", "test or non-activating examples to show", examples.summary()
        )
    order = rng.permutation(len(shown))
    shown = [shown[i] for i in order]
    wrong = _n_incorrect(examples.test)
    texts = [
        _text(method, e, active, decode, threshold, wrong, rng, wrong_positions)
        for e, active in shown
    ]  # fmt: skip
    probabilities = None
    if answer == "logprob":
        one = prompt_builder or (lambda expl, batch: render_one(method, expl, batch[0]))
        prompts = [one(explanation, [t]) for t in texts]
        chat = bool(getattr(scorer, "has_chat_template", False))
        # a local model runs the instructions and worked examples every prompt shares once
        share = {"share_prefix": True} if hasattr(scorer, "forward_cached") else {}
        if hasattr(scorer, "next_token_logprobs"):  # "1" and "0" read off one forward pass
            both = scorer.next_token_logprobs(prompts, ["1", "0"], chat=chat, **share)
            yes, no = np.asarray(both[:, 0]), np.asarray(both[:, 1])
        else:
            totals = scorer.logprobs(prompts * 2, ["1"] * len(texts) + ["0"] * len(texts),
                                     chat=chat, **share)  # fmt: skip
            yes, no = np.asarray(totals[: len(texts)]), np.asarray(totals[len(texts) :])
        with np.errstate(over="ignore", invalid="ignore"):  # P 0 when exp overflows; NaN below
            probabilities = 1.0 / (1.0 + np.exp(no - yes))
        _check_finite(probabilities, "scorer", f"{method} P('1')")
        predicted: list[int | None] = [int(p > 0.5) for p in probabilities]
        texts = []  # nothing left to generate
    build = prompt_builder or (lambda expl, batch: render(method, expl, batch))
    if answer == "list":
        predicted = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        (reply,) = scorer.generate([build(explanation, batch)], 16 + 4 * len(batch), chat=True,
                                   temperature=0.0)  # fmt: skip
        labels = parse_labels(reply, len(batch))
        predicted += labels if labels is not None else [None] * len(batch)
    parsed = [i for i, p in enumerate(predicted) if p is not None]
    truth = np.array([shown[i][1] for i in parsed], dtype=bool)
    guess = np.array([predicted[i] for i in parsed], dtype=bool)
    quantiles = np.array(
        [shown[i][0].quantile if shown[i][1] else -1 for i in parsed], dtype=np.int64
    )
    counts = _confusion(truth, guess)
    auroc = math.nan
    if probabilities is not None and truth.any() and not truth.all():
        from sklearn.metrics import roc_auc_score

        auroc = float(roc_auc_score(truth, probabilities))
    return ClassificationScore(
        latent=examples.latent,
        method=method,
        explanation=explanation,
        n_examples=len(shown),
        n_failed=len(shown) - len(parsed),
        **counts,
        **_metrics(**counts),
        interval=_bootstrap(truth, guess, n_bootstrap, rng),
        answer=answer,
        auroc=auroc,
        activating=truth,
        predicted=guess,
        quantiles=quantiles,
        probabilities=probabilities,
    )


def _n_incorrect(test: Sequence[Example]) -> int:
    if not test:
        return 1
    return max(1, math.ceil(float(np.mean([(e.activations > 0).sum() for e in test]))))


def _text(
    method: str,
    example: Example,
    active: bool,
    decode: Callable[[int], str],
    threshold: float,
    n_incorrect: int,
    rng: np.random.Generator,
    wrong_positions: Callable[[Example, int], Sequence[int]] | None = None,
) -> str:
    pieces = [decode(int(t)) for t in example.tokens]
    if method == "detection":
        return "".join(pieces)
    if active:
        return highlight(pieces, example.activations, threshold)[0]
    n = len(pieces)
    if wrong_positions is not None:
        return highlight(pieces, _given_positions(wrong_positions, example, n_incorrect, n), 0.5)[0]
    centre = len(example.tokens) - len(example.tokens) // 4 if n >= 4 else None
    k = min(n_incorrect, n)
    chosen = [] if centre is None or centre >= n else [centre]
    others = [i for i in range(n) if i not in chosen]
    chosen += [int(i) for i in rng.choice(others, k - len(chosen), replace=False)]
    fake = np.zeros(n)
    fake[chosen] = 1.0
    return highlight(pieces, fake, 0.5)[0]


def _given_positions(
    wrong_positions: Callable[[Example, int], Sequence[int]],
    example: Example,
    n_incorrect: int,
    n: int,
) -> np.ndarray:
    """0/1 marks at the token indices the caller's ``wrong_positions`` chose (validated)."""
    chosen = wrong_positions(example, n_incorrect)
    try:
        index = [operator.index(i) for i in chosen]
    except TypeError:
        index = None
    if index is None or len(set(index)) != len(index) or not all(0 <= i < n for i in index):
        raise InputError.bad(
            "wrong_positions", f"distinct token indices in [0, {n - 1}] from the callable", chosen
        )
    marks = np.zeros(n)
    marks[index] = 1.0
    return marks


def _confusion(truth: np.ndarray, guess: np.ndarray) -> dict[str, int]:
    return {
        "tp": int((truth & guess).sum()),
        "tn": int((~truth & ~guess).sum()),
        "fp": int((~truth & guess).sum()),
        "fn": int((truth & ~guess).sum()),
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def _metrics(tp: int, tn: int, fp: int, fn: int) -> dict[str, float]:
    tpr, tnr = _ratio(tp, tp + fn), _ratio(tn, tn + fp)
    precision = _ratio(tp, tp + fp)
    return {
        "balanced_accuracy": (tpr + tnr) / 2,
        "accuracy": _ratio(tp + tn, tp + tn + fp + fn),
        "precision": precision,
        "recall": tpr,
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
    }


def _bootstrap(
    truth: np.ndarray, guess: np.ndarray, n: int, rng: np.random.Generator
) -> tuple[float, float]:
    if truth.sum() < 2 or (~truth).sum() < 2:
        return (math.nan, math.nan)
    values = []
    for _ in range(n):
        rows = rng.integers(0, len(truth), len(truth))
        t, g = truth[rows], guess[rows]
        if t.all() or not t.any():
            continue
        values.append(_metrics(**_confusion(t, g))["balanced_accuracy"])
    if not values:  # every draw held one class only (few examples, few draws)
        return (math.nan, math.nan)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)

"""Explanations of SAE latents in words, from their examples (the spec's explainer).

The explainer is any language model with trustlab's ``generate`` call
(:class:`~trustlab.llm.LanguageModel`: a local model, or one behind an OpenAI-compatible
endpoint). It is shown a latent's training examples with every token whose activation exceeds
``threshold`` times that example's largest activation wrapped in ``<< >>`` (consecutive tokens
merged into one span), optionally followed by the marked tokens with their display activations
(0-10), and asked for a short description after a final ``[EXPLANATION]:`` marker.

Parsing takes the text after the **last** marker in the answer (first-match parsing let a
chain of thought, or an example that contains the marker, replace the explanation: a defect of
the authors' code fixed upstream). An answer without the marker keeps its first non-empty line,
and the explanation records that the marker was missing.

:func:`template_explanation` is the model-free baseline: the tokens most often marked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trustlab._checks import check_bool, check_in_range, check_positive_int
from trustlab._results import Result
from trustlab.errors import InputError
from trustlab.interpret.sae.examples import LatentExamples

__all__ = [
    "LatentExplanation",
    "highlight",
    "explanation_prompt",
    "parse_explanation",
    "explain_latent",
    "template_explanation",
    "MARKER",
]

#: The marker the answer's explanation follows.
MARKER = "[EXPLANATION]:"
_OPEN, _CLOSE = "<<", ">>"

_INSTRUCTIONS = (
    "You study one feature inside a language model. Below are text excerpts where the feature "
    "is active; the tokens where it is most active are marked like {open}this{close}. Find what "
    "the marked tokens have in common (a word, a kind of word, a topic, a pattern) and describe "
    "the feature in a few words.{cot} End your answer with one line that starts with {marker} "
    "followed by the description."
)
_COT = " Think it through briefly first."


@dataclass(frozen=True)
class LatentExplanation(Result):
    """One latent's explanation.

    Attributes
    ----------
    latent : int
    text : str
        The description (empty when the answer was empty).
    marker_found : bool
        Whether the answer held the ``[EXPLANATION]:`` marker (False: its first line was kept).
    explainer : str
        The explainer's name (``"template"`` for :func:`template_explanation`).
    answer : str
        The explainer's whole answer.
    """

    latent: int
    text: str
    marker_found: bool
    explainer: str
    answer: str

    def summary(self) -> str:
        note = "" if self.marker_found else " (no marker: first line kept)"
        return f"latent {self.latent}: {self.text!r}{note} [{self.explainer}]"


def _pieces(tokens: Sequence[int], decode: Callable[[int], str]) -> list[str]:
    return [decode(int(t)) for t in tokens]


def highlight(
    pieces: Sequence[str], activations: Any, threshold: float = 0.3
) -> tuple[str, list[int]]:
    """The text of ``pieces`` with the tokens above ``threshold`` x the largest activation
    wrapped in ``<< >>`` (consecutive ones in one span); also the marked token indices.

    Examples
    --------
    >>> highlight(["The", " cat", " sat", " down"], [0.0, 2.0, 1.0, 0.1])
    ('The<< cat sat>> down', [1, 2])
    """
    if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__len__"):
        raise InputError.bad("pieces", "a sequence of strings, one per token", pieces)
    for i, piece in enumerate(pieces):
        if not isinstance(piece, str):
            raise InputError.bad(f"pieces[{i}]", "a string", piece)
    try:
        values = np.asarray(activations, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError.bad("activations", "numbers, one per piece", activations) from None
    if values.shape != (len(pieces),):
        raise InputError.bad("activations", f"{len(pieces)} values, one per piece", activations)
    top = values.max() if len(values) else 0.0
    marked = [i for i, v in enumerate(values) if top > 0 and v > threshold * top]
    out, inside = [], False
    for i, piece in enumerate(pieces):
        if i in marked and not inside:
            out.append(_OPEN)
            inside = True
        if i not in marked and inside:
            out.append(_CLOSE)
            inside = False
        out.append(piece)
    if inside:
        out.append(_CLOSE)
    return "".join(out), marked


def explanation_prompt(
    examples: LatentExamples,
    decode: Callable[[int], str],
    *,
    threshold: float = 0.3,
    show_activations: bool = True,
    chain_of_thought: bool = False,
    max_listed: int = 10,
) -> str:
    """The explainer's prompt for ``examples.train`` (see the module docstring).

    Parameters
    ----------
    examples : LatentExamples
    decode : callable
        Token id -> its text (for example ``lambda t: tokenizer.decode([t])``).
    threshold : float, default 0.3
        Share of each example's largest activation above which a token is marked.
    show_activations : bool, default True
        List each example's marked tokens with their display activations (0-10).
    chain_of_thought : bool, default False
        Ask for brief reasoning before the marker.
    max_listed : int, default 10
        At most this many listed tokens per example.
    """
    if not isinstance(examples, LatentExamples):
        raise InputError.bad("examples", "LatentExamples (latent_examples)", examples)
    if not callable(decode):
        raise InputError.bad("decode", "a callable token id -> text", decode)
    threshold = check_in_range(threshold, "threshold", 0.0, 1.0, high_open=True)
    show = check_bool(show_activations, "show_activations")
    cot = check_bool(chain_of_thought, "chain_of_thought")
    max_listed = check_positive_int(max_listed, "max_listed")
    if not examples.train:
        raise InputError.bad("examples", "at least one training example", examples.summary())
    lines = [
        _INSTRUCTIONS.format(open=_OPEN, close=_CLOSE, cot=_COT if cot else "", marker=MARKER),
        "",
    ]
    for number, example in enumerate(examples.train, 1):
        pieces = _pieces(example.tokens, decode)
        text, marked = highlight(pieces, example.activations, threshold)
        lines.append(f"Excerpt {number}: {_one_line(text)}")
        if show and marked:
            levels = example.normalized(examples.max_activation)
            listed = sorted(marked, key=lambda i: -example.activations[i])[:max_listed]
            pairs = ", ".join(
                f"{pieces[i].strip() or repr(pieces[i])} ({levels[i]})" for i in listed
            )
            lines.append(f"Active tokens (0-10): {pairs}")
    return "\n".join(lines)


def parse_explanation(answer: str) -> tuple[str, bool]:
    """``(explanation, marker_found)``: the text after the last ``[EXPLANATION]:`` (up to the
    end of its line), or the answer's first non-empty line when the marker is missing.

    Examples
    --------
    >>> parse_explanation("Reasoning... [EXPLANATION]: draft\\n[EXPLANATION]: the word 'cat'")
    ("the word 'cat'", True)
    >>> parse_explanation("\\n  numbers and digits\\nmore")
    ('numbers and digits', False)
    """
    if not isinstance(answer, str):
        raise InputError.bad("answer", "a string", answer)
    at = answer.rfind(MARKER)
    if at >= 0:
        rest = answer[at + len(MARKER) :].strip()
        line = rest.splitlines()[0] if rest else ""
        # a marker set in bold ("**[EXPLANATION]:** cats", "**[EXPLANATION]: cats**") left
        # the closing "**" before or after the explanation (from the start when a space follows
        # it or the end lacks it: "**[EXPLANATION]: **kwargs**" is about "**kwargs")
        wrap = answer[:at][len(answer[:at].rstrip("*_")) :]
        after = line[len(wrap) :]
        if wrap and line.startswith(wrap) and (after[:1].isspace() or not after.endswith(wrap)):
            line = after
        elif wrap and line.endswith(wrap):
            line = line[: -len(wrap)]
        return _clean(line), True
    for line in answer.splitlines():
        if line.strip():
            return _clean(line), False
    return "", False


def explain_latent(
    examples: LatentExamples,
    explainer: Any,
    decode: Callable[[int], str],
    *,
    threshold: float = 0.3,
    show_activations: bool = True,
    chain_of_thought: bool = False,
    max_new_tokens: int = 64,
    random_state: Any = None,
) -> LatentExplanation:
    """Ask ``explainer`` (any model with trustlab's ``generate``) to explain one latent.

    The prompt is :func:`explanation_prompt`, sent as one chat turn at temperature 0; the answer
    is read by :func:`parse_explanation`.
    """
    if not hasattr(explainer, "generate") or not hasattr(explainer, "name"):
        raise InputError.bad("explainer", "a language model with name and generate", explainer)
    prompt = explanation_prompt(
        examples,
        decode,
        threshold=threshold,
        show_activations=show_activations,
        chain_of_thought=chain_of_thought,
    )
    max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens")
    (answer,) = explainer.generate(
        [prompt], max_new_tokens, chat=True, temperature=0.0, random_state=random_state
    )
    text, found = parse_explanation(answer)
    return LatentExplanation(examples.latent, text, found, str(explainer.name), answer)


def template_explanation(
    examples: LatentExamples,
    decode: Callable[[int], str],
    *,
    threshold: float = 0.3,
    n_tokens: int = 5,
) -> LatentExplanation:
    """The baseline without a model: ``"tokens most often marked: a, b, c"`` over the training
    examples (ties broken by first appearance). Its inputs are refused as
    :func:`explanation_prompt` refuses them (no training example: nothing to name)."""
    if not isinstance(examples, LatentExamples):
        raise InputError.bad("examples", "LatentExamples (latent_examples)", examples)
    if not callable(decode):
        raise InputError.bad("decode", "a callable token id -> text", decode)
    threshold = check_in_range(threshold, "threshold", 0.0, 1.0, high_open=True)
    n_tokens = check_positive_int(n_tokens, "n_tokens")
    if not examples.train:
        raise InputError.bad("examples", "at least one training example", examples.summary())
    counts: Counter[str] = Counter()
    for example in examples.train:
        pieces = _pieces(example.tokens, decode)
        _, marked = highlight(pieces, example.activations, threshold)
        counts.update(pieces[i].strip() or pieces[i] for i in marked)
    words = [w for w, _ in counts.most_common(n_tokens)]
    text = "tokens most often marked: " + ", ".join(words) if words else ""
    return LatentExplanation(examples.latent, text, True, "template", text)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean(text: str) -> str:
    """One line, without a pair of quotes (or bold stars) around all of it."""
    text = _one_line(text).strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`*":
        text = text[1:-1].strip()
    return text

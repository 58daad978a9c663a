"""A generated text with the log-probability of each of its tokens.

``LocalModel.completions`` and ``RemoteModel.completions`` both return :class:`Completion`
results: the text, why it ended, and per generated token its text, its log-probability under the
model and the most likely alternatives at that position.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trustlab._results import Result

__all__ = ["Completion", "logprob_pairs"]


@dataclass(frozen=True)
class Completion(Result):
    """One generated text and its tokens' log-probabilities (natural log).

    Attributes
    ----------
    text : str
        The new text (cut before a stop string when one ended it).
    finish_reason : str
        ``"stop"`` (end-of-sequence token or stop string) or ``"length"`` (the token budget).
    tokens : tuple of str
        The text of each generated token that contributes to ``text`` (the end-of-sequence
        token and tokens after a stop string are left out).
    logprobs : tuple of float
        The log-probability of each token, from the model's log-softmax at that position
        (before temperature).
    top_logprobs : tuple of tuple of (str, float)
        The most likely tokens at each position with their log-probabilities, best first (empty
        tuples when no alternatives were asked for).

    Examples
    --------
    >>> c = Completion("Hi.", "stop", ("Hi", "."), (-0.5, -0.25), ((("Hi", -0.5),), ((".", -0.25),)))
    >>> round(c.total_logprob, 2)
    -0.75
    >>> c.to_dict()["total_logprob"]
    -0.75
    """

    text: str
    finish_reason: str
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    top_logprobs: tuple[tuple[tuple[str, float], ...], ...]

    _dict_extras = ("total_logprob",)

    @property
    def total_logprob(self) -> float:
        """The log-probability of the whole generated token sequence."""
        return float(sum(self.logprobs))

    def summary(self) -> str:
        return (
            f"{self.text}\n[{len(self.tokens)} tokens, finish: {self.finish_reason}, "
            f"total log-probability {self.total_logprob:.3f}]"
        )


def completion_from_steps(steps: Iterable[Any]) -> Completion:
    """Join one row's decoding steps (``trustlab.llm._decoding.Step``) into a Completion."""
    text, entries, finish = [], [], "stop"
    for step in steps:
        text.append(step.text)
        entries.extend(step.logprobs)
        finish = step.finish_reason or finish
    return Completion(
        text="".join(text),
        finish_reason=finish,
        tokens=tuple(e.token for e in entries),
        logprobs=tuple(float(e.logprob) for e in entries),
        top_logprobs=tuple(tuple((t, float(v)) for t, v in e.top) for e in entries),
    )


def logprob_pairs(top_logprobs: Any) -> list[tuple[Any, Any]]:
    """A first token's alternatives as ``(token, logprob)`` pairs, from any of the shapes they
    come in: a mapping token -> logprob, ``{"token", "logprob"}`` dicts (OpenAI JSON), objects
    with ``token`` and ``logprob`` (inspect's and openai's), or pairs. Anything else raises
    TypeError, KeyError or ValueError; callers turn that into an InputError naming their
    argument.

    >>> logprob_pairs({"yes": -0.1}) == logprob_pairs([{"token": "yes", "logprob": -0.1}])
    True
    """
    if isinstance(top_logprobs, Mapping):
        return list(top_logprobs.items())
    if isinstance(top_logprobs, (str, bytes)):
        raise TypeError("a string is not a list of alternatives")
    pairs = []
    for item in top_logprobs:
        if isinstance(item, Mapping):
            pairs.append((item["token"], item["logprob"]))
        elif hasattr(item, "token") and hasattr(item, "logprob"):
            pairs.append((item.token, item.logprob))
        else:
            token, logprob = item
            pairs.append((token, logprob))
    return pairs

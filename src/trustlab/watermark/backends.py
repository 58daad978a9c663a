"""Backends that answer WMarkGPT's questions about a watermarked image.

A backend has two methods (:class:`WatermarkBackend`):

- ``answer(image, question) -> str``: one paragraph ending with "The watermark visibility is: L.";
- ``level_logits(image) -> (5,) array``: scores of the five level words, in
  :data:`~trustlab.watermark.vocabulary.LEVELS` order, whose softmax gives WMarkGPT's Q-Align-style
  expected score (``sum softmax x [5, 4, 3, 2, 1]``).

:class:`TemplateBackend` (the default, CPU) is the no-reference predictor followed by the
deterministic describer: it only says what the predictor estimated. Any other model that
implements the two methods plugs in (a vision-language model reads ``level_logits`` as the
next-token logits of the five level words after :data:`READOUT_PROMPT`); a ``transformers``
vision-language backend is not part of this release.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import LEVEL_SCORES, LEVELS

__all__ = [
    "WatermarkBackend",
    "TemplateBackend",
    "READOUT_PROMPT",
    "expected_score",
]

#: What WMarkGPT appends to the question before reading the level words' logits.
READOUT_PROMPT = "The watermark visibility is: "


@runtime_checkable
class WatermarkBackend(Protocol):
    """What trustlab needs from a model that looks at watermarked images."""

    def answer(self, image: np.ndarray, question: str) -> str: ...

    def level_logits(self, image: np.ndarray) -> np.ndarray: ...


def expected_score(logits: Any) -> float:
    """WMarkGPT's Q-Align-style score: ``sum softmax(logits) x [5, 4, 3, 2, 1]``.

    >>> round(expected_score([0.0, 0.0, 0.0, 0.0, 0.0]), 6)
    3.0
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.shape != (len(LEVELS),) or not np.all(np.isfinite(z)):
        raise InputError.bad("logits", "5 finite level-word logits", z)
    p = np.exp(z - z.max())
    p /= p.sum()
    return float(p @ np.asarray(LEVEL_SCORES))


class TemplateBackend:
    """The no-reference predictor and the deterministic describer, as a backend.

    ``predictor``: a fitted :class:`~trustlab.watermark.nr.WatermarkPredictor` (the shipped model
    when None). Each answer's template choice is seeded from ``random_state`` and the question, so
    the same question on the same image gets the same paragraph.
    """

    def __init__(self, predictor: Any = None, *, random_state: int = 0) -> None:
        self.predictor = predictor
        self.random_state = random_state

    def _model(self) -> Any:
        if self.predictor is None:
            from trustlab.watermark.checkpoints import load_checkpoint

            self.predictor = load_checkpoint()
        return self.predictor

    def predict(self, images: Any) -> Any:
        """The predictor's :class:`~trustlab.watermark.nr.WatermarkPredictions` of ``images``."""
        return self._model().predict(images)

    def answer(self, image: np.ndarray, question: str) -> str:
        return self.answer_batch([image], [question])[0]

    def answer_batch(self, images: Sequence[np.ndarray], questions: Sequence[str]) -> list[str]:
        """Answers for many images at once (one batched predictor pass)."""
        from trustlab.watermark.describer import describe

        if len(images) != len(questions):
            raise InputError.bad(
                "questions", f"{len(images)} questions, one per image", len(questions)
            )
        for q in questions:
            if not isinstance(q, str) or not q.strip():
                raise InputError.bad("question", "a non-empty string", q)
        pred = self.predict(list(images))
        seeds = [_seed(self.random_state, q) for q in questions]
        return [describe(pred.facts(i), random_state=s) for i, s in enumerate(seeds)]

    def level_logits(self, image: np.ndarray) -> np.ndarray:
        pred = self.predict([image])
        return np.log(np.clip(pred.level_probabilities[0], 1e-300, None))


def _seed(random_state: int, question: str) -> int:
    import hashlib

    digest = hashlib.sha256(f"{int(random_state)}|{question}".encode()).digest()
    return int.from_bytes(digest[:4], "little")

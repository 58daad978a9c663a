"""evaluate_backend took what answer_batch gave on trust (review 64): a string was extended as one
answer per character (3 images: "got 35" answers, naming ``answers``, no argument of the call), a
batch with one answer too many was refused only after every image had been answered, and a
negative ``batch_size`` answered nothing (then "answers: expected at least one"). Now each batch
is checked as it comes back, naming ``backend``, and the size naming ``backend.batch_size``."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import WatermarkFacts, evaluate_backend

_FINAL = "The watermark visibility is: invisible."


class _Clean:  # three clean images (a stand-in for a generated set)
    images = np.zeros((3, 8, 8, 3), np.uint8)
    kinds = ("clean",) * 3
    scores = np.full(3, 5.0)
    levels = ("invisible",) * 3

    def __len__(self):
        return 3

    def facts(self, i):
        return WatermarkFacts(False, 5.0, "invisible")


class _Batched:
    def __init__(self, reply, batch_size=2):
        self.reply, self.batch_size, self.calls = reply, batch_size, 0

    def answer(self, image, question):
        return _FINAL

    def answer_batch(self, images, questions):
        self.calls += 1
        return self.reply(len(images))

    def level_logits(self, image):
        return np.zeros(5)


@pytest.mark.parametrize(
    "reply",
    [lambda k: _FINAL, lambda k: [_FINAL] * (k + 1), lambda k: None],
    ids=["a string", "one too many", "None"],
)
def test_a_wrong_batch_is_refused_at_once(reply):
    backend = _Batched(reply)
    with pytest.raises(InputError, match="backend: expected answer_batch giving a list of 2"):
        evaluate_backend(backend, _Clean())
    assert backend.calls == 1


def test_a_negative_batch_size_is_refused_and_good_batches_still_score():
    with pytest.raises(InputError, match="backend.batch_size"):
        evaluate_backend(_Batched(lambda k: [_FINAL] * k, batch_size=-2), _Clean())
    for reply in (
        lambda k: [_FINAL] * k,
        lambda k: tuple([_FINAL] * k),
        lambda k: iter([_FINAL] * k),
    ):
        backend = _Batched(reply)
        result = evaluate_backend(backend, _Clean(), readout=False)
        assert backend.calls == 2 and result.answers == (_FINAL,) * 3
        assert result.descriptions.accuracy_exact == 1.0
    assert len(evaluate_backend(_Batched(lambda k: [_FINAL] * k, None), _Clean()).answers) == 3

"""evaluate_backend checked random_state only after every image had been answered (for a
vision-language model, generation of up to 512 tokens per image), then reference_paragraphs raised
a raw ValueError for -1 or "x" and cut 1.5 to 1; True was read as 1 (review 60). Now an
InputError before the first answer, from reference_paragraphs too."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.watermark import evaluate_backend, reference_paragraphs, synthesize


class _Backend:
    def __init__(self):
        self.calls = 0

    def answer(self, image, question):
        self.calls += 1
        return "The watermark visibility is: invisible."

    def level_logits(self, image):
        return [0.0] * 5


@pytest.fixture(scope="module")
def clean2():
    return synthesize(2, random_state=0, clean_fraction=1.0)  # no marks to draw: cheap


@pytest.mark.parametrize("seed", [-1, "x", 1.5, True])
def test_a_bad_seed_is_refused_before_any_answer(clean2, seed):
    backend = _Backend()
    with pytest.raises(InputError, match="random_state: expected a non-negative int seed"):
        evaluate_backend(backend, clean2, random_state=seed)
    assert backend.calls == 0
    with pytest.raises(InputError, match="random_state"):
        reference_paragraphs(clean2, random_state=seed)


def test_a_good_seed_still_scores(clean2):
    backend = _Backend()
    result = evaluate_backend(backend, clean2, random_state=3)
    assert backend.calls == 2 and result.descriptions.accuracy_exact == 1.0


@pytest.mark.parametrize("readout", ["no", 0, None])
def test_readout_takes_true_or_false_only(clean2, readout):
    # "no" was read as true (the readout ran); refused before any answer
    backend = _Backend()
    with pytest.raises(InputError, match="^readout: expected True or False"):
        evaluate_backend(backend, clean2, readout=readout)
    assert backend.calls == 0
    assert evaluate_backend(backend, clean2, readout=False).readout is None

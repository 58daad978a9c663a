"""Review 65 (rsae2): detection and fuzzing scored an empty or blank explanation (balanced
accuracy 0.5 with a scorer answering every excerpt 0) where the embedding, surprisal and
intervention scorers refuse it; they now refuse it too, naming ``explanation``."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import detection_score, fuzzing_score
from trustlab.interpret.sae.examples import Example, LatentExamples


class _NeverCalled:
    name = "never"

    def generate(self, *args, **kwargs):
        raise AssertionError("an empty explanation reached the scorer")


def _examples() -> LatentExamples:
    one = Example(0, 0, np.arange(4), np.array([0, 1, 0, 0], np.float32), 0)
    none = Example(1, 0, np.arange(4), np.zeros(4, np.float32), None)
    return LatentExamples(latent=0, n_activating=1, max_activation=1.0, explainable=True,
                          quantile_edges=(1.0,), test=(one,), not_active=(none,))  # fmt: skip


@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
@pytest.mark.parametrize("text", ["", "  \n "])
def test_an_empty_explanation_is_refused(score, text):
    with pytest.raises(InputError, match="explanation: expected a non-empty string"):
        score(_examples(), text, _NeverCalled(), str)

"""Review 65 (rsae2): a scorer whose log-probabilities were NaN (or -inf for both "1" and "0")
made detection/fuzzing (``answer="logprob"``) and surprisal raise scikit-learn's bare
``ValueError: Input contains NaN``; they now raise a BackendError naming the model and how many
examples."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import BackendError
from trustlab.interpret import detection_score, fuzzing_score, surprisal_score
from trustlab.interpret.sae.examples import Example, LatentExamples


class _Broken:
    name = "broken"

    def __init__(self, value):
        self.value = value

    def logprobs(self, prompts, continuations, **kwargs):
        return np.full(len(prompts), self.value)

    def next_token_logprobs(self, prompts, tokens, **kwargs):
        return np.full((len(prompts), len(tokens)), self.value)


def _examples() -> LatentExamples:
    def one(context, quantile):
        acts = np.array([0, 1, 0, 0], np.float32) if quantile is not None else np.zeros(4)
        return Example(context, 0, np.arange(4) + context, acts.astype(np.float32), quantile)

    return LatentExamples(latent=0, n_activating=2, max_activation=1.0, explainable=True,
                          quantile_edges=(1.0,), test=(one(0, 0), one(1, 0)),
                          not_active=(one(2, None), one(3, None)))  # fmt: skip


@pytest.mark.parametrize("value", [np.nan, -np.inf])
@pytest.mark.parametrize("score", [detection_score, fuzzing_score])
def test_classification_by_logprob(score, value):
    with pytest.raises(BackendError, match=r"scorer: .* not finite .* for 4 of 4 examples"):
        score(_examples(), "cats", _Broken(value), str, answer="logprob", n_bootstrap=5)


def test_surprisal():
    with pytest.raises(BackendError, match=r"model: its surprisal scores are not finite"):
        surprisal_score(_examples(), "cats", _Broken(np.nan), str, n_bootstrap=5)

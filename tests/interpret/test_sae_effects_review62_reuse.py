"""Two shortcuts of the intervention score that must give the numbers of the long way.

``intervened_generations(..., clean=...)`` returns the given clean continuations (another
latent's, same prompts and seed) and samples only the intervened ones: the same intervened
texts as sampling both. ``explanation_logprobs`` skips the explanation pass when every
explanation is one token (its logits are never read): the same numbers as with a longer
explanation beside it.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.interpret import SparseAutoencoder, intervened_generations
from trustlab.interpret.sae.effects import explanation_logprobs

PROMPTS = ["The cat sat on the", "One, two, three,", "It rained all"]


@pytest.fixture(scope="module")
def sae(tiny):
    rng = np.random.default_rng(0)
    W_dec = rng.normal(size=(3, tiny.hidden_size))
    return SparseAutoencoder.from_weights(W_dec.T, np.zeros(3), W_dec,
                                          np.zeros(tiny.hidden_size), layer=1)  # fmt: skip


def test_given_clean_continuations_leave_the_intervened_ones_unchanged(tiny, sae):
    clean, raised = intervened_generations(tiny, sae, 1, PROMPTS, 8.0, max_new_tokens=3,
                                           random_state=3)  # fmt: skip
    given = ["a", "b", "c"]  # returned as they are, not sampled
    found = intervened_generations(tiny, sae, 1, PROMPTS, 8.0, max_new_tokens=3,
                                   random_state=3, clean=given)  # fmt: skip
    assert found == (given, raised)


@pytest.mark.parametrize("clean", ["abc", ["a", "b"], ["a", "b", 3], 5])
def test_clean_continuations_must_be_one_string_per_prompt(tiny, sae, clean):
    with pytest.raises(InputError) as err:
        intervened_generations(tiny, sae, 0, PROMPTS, 8.0, clean=clean)
    assert err.value.argument == "clean"


def test_one_token_explanations_skip_the_explanation_pass(tiny):
    passages = ["The cat sat on the mat", "Numbers: 1, 2 and 3."]
    assert len(tiny.tokenizer("cats", add_special_tokens=False)["input_ids"]) == 1
    alone = explanation_logprobs(tiny, passages, ["cats", "x"])
    beside = explanation_logprobs(tiny, passages, ["cats", "x", "the weather"])
    assert np.array_equal(alone, beside[:2])

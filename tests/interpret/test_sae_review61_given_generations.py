"""Stop 61 (saestr): ``intervention_score(..., generations=...)`` checks the latent, the prompts
and the strength as sampling the generations would.

With ``generations`` given, nothing but the explanations, scorer and generations was checked:
latent 9 of a 4-latent SAE was scored and reported, strength NaN or True was recorded as the
score's strength, and strength 'abc' raised a raw ValueError ("could not convert string to
float").
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.interpret.sae import SparseAutoencoder, intervention_score

pytest.importorskip("torch")
PROMPTS = ["a b", "c"]
GIVEN = (["a", "b"], ["c", "d"])


@pytest.fixture(scope="module")
def subject():
    lm = tiny_llama(word_tokenizer(["a", "b", "c", "d"]), 8, hidden_size=16)
    rng = np.random.default_rng(0)
    sae = SparseAutoencoder.from_weights(
        rng.normal(size=(16, 4)), rng.normal(size=4) * 0.1, rng.normal(size=(4, 16)),
        rng.normal(size=16), k=2, layer=1,
    )  # fmt: skip
    return lm, sae


@pytest.mark.parametrize(
    ("latent", "strength", "argument"),
    [(9, 1.0, "latent"), (0, "abc", "strength"), (0, math.nan, "strength"),
     (0, True, "strength"), (0, 1e30, "strength")],
)  # fmt: skip
def test_given_generations_do_not_skip_the_checks(subject, latent, strength, argument):
    lm, sae = subject
    with pytest.raises(InputError, match=f"^{argument}: expected") as caught:
        intervention_score(lm, sae, latent, PROMPTS, "a", strength, generations=GIVEN)
    assert caught.value.argument == argument


def test_given_generations_with_sound_arguments_are_scored(subject):
    lm, sae = subject
    found = intervention_score(lm, sae, 0, PROMPTS, "a", np.float32(2.0), generations=GIVEN)
    assert found.strength == 2.0 and found.intervened == ("a bc", "cd")

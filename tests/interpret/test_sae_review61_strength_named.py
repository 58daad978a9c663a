"""Stop 61 (saestr): the SAE intervention functions name ``strength``, which their caller
passed, not ``fn``.

They add ``strength * W_dec[latent]`` through ``LocalModel.intervene``: a strength whose shift
overflowed float32 gave 'fn: expected a tensor of finite values back ...', and a shift of L2
norm past 1.84e19 (the float32 norm layers overflow: every token the same probability) was
accepted: at 1e19 on the tiny Llama below ``intervention_kl`` gave 0.0121 nats (the KL to a
uniform next token) and greedy generations were empty. Now ``intervention_kl``,
``output_effects`` and ``intervened_generations`` refuse it up front naming ``strength``;
``kl_curve`` (what ``calibrate_strength`` searches, treating overflow as too strong) does not,
and a non-finite shift in it is blamed on ``strength``.

And ``intervention_score(..., generations=...)`` (the CLI's path) checks the latent, the prompts
and the strength as sampling the generations would: nothing but the explanations, scorer and
generations was checked, so latent 9 of a 4-latent SAE was scored and reported, strength NaN or
True was recorded as the score's strength, and strength 'abc' raised a raw ValueError.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.interpret.sae import (
    SparseAutoencoder,
    intervened_generations,
    intervention_kl,
    intervention_score,
    kl_curve,
    output_effects,
)
from trustlab.llm.settings import STEER_NORM_LIMIT

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


@pytest.mark.parametrize("fn", [intervention_kl, output_effects, intervened_generations])
def test_a_shift_past_the_norm_limit_is_refused_naming_strength(subject, fn):
    lm, sae = subject
    norm = float(np.linalg.norm(sae.W_dec_[0].astype(float)))
    strength = 1.01 * STEER_NORM_LIMIT / norm
    with pytest.raises(InputError, match=r"^strength: expected strength \* vector with an L2 "
                       r"norm below 1\.84e\+19") as caught:  # fmt: skip
        fn(lm, sae, 0, PROMPTS, strength)
    assert caught.value.argument == "strength"
    assert not any(layer._forward_hooks for layer in lm._layers)
    # just below the limit is taken (negative strengths too: the norm is what counts)
    assert math.isfinite(intervention_kl(lm, sae, 0, PROMPTS, -0.99 * STEER_NORM_LIMIT / norm))


def test_kl_curve_still_takes_any_finite_strength_and_blames_overflow_on_strength(subject):
    lm, sae = subject
    kl = kl_curve(lm, sae, 0, PROMPTS)
    assert math.isfinite(kl(1e20))  # past the limit: calibrate_strength gets a value, as before
    assert kl(2.0) == pytest.approx(intervention_kl(lm, sae, 0, PROMPTS, 2.0), rel=1e-12)
    with pytest.raises(InputError, match=r"^strength: expected strength \* vector to stay finite "
                       r"in the layer's output .* at layer 1 \(float32\)") as caught:  # fmt: skip
        with np.errstate(over="ignore"):
            kl(1e39)  # float32 overflow of the shift itself
    assert caught.value.argument == "strength"


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

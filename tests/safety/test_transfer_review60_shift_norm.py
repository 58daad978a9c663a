"""Diff review 60 (B) of 23db733f: the backdoor measures refuse a steering shift too large for
float32, as ``LocalModel.steer`` now does.

``trigger_rate`` / ``steered_completions`` with ``steer_at='last'`` and ``perplexity`` (either
``steer_at``) add ``scale * vector`` through their own ``intervene`` hooks, not through ``steer``,
so its new check did not reach them: on SmolLM2 with a unit vector at layer 10 and scale 1e20,
``perplexity(..., steer_at='all')`` gave 49152.0, the vocabulary size (every norm layer overflowed
to zeros: a uniform head), and ``steered_completions(..., steer_at='last')`` gave ' native_function'
for 'Hello there', silently, while ``steered_completions(..., steer_at='all')`` was refused.
Now all of them raise InputError naming ``scale`` before any forward pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import SteeringVector, perplexity, steered_completions

pytest.importorskip("torch")

LIMIT = float(np.sqrt(np.finfo(np.float32).max))
WORDS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def tiny():
    return tiny_llama(word_tokenizer(WORDS), 8, hidden_size=16)


def _vector():
    vector = np.zeros(16)
    vector[3] = 1.0
    return SteeringVector(
        vector=vector, layer=1, kind="prompt", model="x", n_pairs=1, n_positive=1, n_negative=1
    )


@pytest.mark.parametrize(
    "measure",
    [
        lambda lm, v, s: steered_completions(lm, ["a b"], vector=v, scale=s, steer_at="last"),
        lambda lm, v, s: steered_completions(lm, ["a b"], vector=v, scale=s, steer_at="all"),
        lambda lm, v, s: perplexity(lm, ["a b c"], vector=v, scale=s, steer_at="all"),
        lambda lm, v, s: perplexity(lm, ["c d"], prompts=["a b"], vector=v, scale=s),
    ],
    ids=["completions-last", "completions-all", "perplexity-all", "perplexity-last"],
)
@pytest.mark.parametrize("scale", [1e20, 1.01 * LIMIT, -1e38])
def test_a_shift_past_float32s_square_root_is_refused_naming_scale(tiny, measure, scale):
    with pytest.raises(InputError, match=r"^scale: .*L2 norm below 1\.84e\+19") as caught:
        measure(tiny, _vector(), scale)
    assert caught.value.argument == "scale"


def test_a_shift_just_under_the_limit_is_still_measured(tiny):
    value = perplexity(tiny, ["a b c"], vector=_vector(), scale=0.99 * LIMIT, steer_at="all")
    assert np.isfinite(value)
    text = steered_completions(tiny, ["a b"], vector=_vector(), scale=0.99 * LIMIT)
    assert isinstance(text[0], str)

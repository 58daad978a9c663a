"""Batched generation_states and Safe Flow on a row that ends early (diff review 63 E of
107cbc7b): a 2-layer random Llama with tied embeddings repeats its prompt's last token, so a
prompt ending in the end-of-sequence token stops after one step while the others run on; its
padded passes are not its steps, as when it is generated alone (batch_size=1)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope, generation_states, steered_generate

PROMPTS = ["the cat sat on the", "hi!", "a much longer prompt about the weather in the hills"]
STEPS = 4


@pytest.fixture(scope="module")
def tiny(smollm2):
    from tiny_llama import tiny_llama

    lm = tiny_llama(smollm2.tokenizer, smollm2.model.config.vocab_size, hidden_size=48)
    eos = lm._encode(["hi!"], False)[0][-1]  # "hi!" repeats "!": one step
    lm.model.generation_config.eos_token_id = eos
    lm._eos_ids = eos
    # a polytope fitted on the model's own states (split at a coordinate's median) flags some
    states = generation_states(lm, PROMPTS, 1, STEPS, chat=False, batch_size=1).stacked()
    rng = np.random.default_rng(0)
    X = states[rng.integers(len(states), size=60)] + 0.1 * states.std() * rng.normal(size=(60, 48))
    polytope = SafetyPolytope(n_facets=3, layer=1, random_state=0, max_epochs=5)
    return lm, polytope.fit(X, X[:, 0] > np.median(X[:, 0]))


def test_a_row_that_ends_early_gets_no_state_or_check_after_its_end(tiny):
    lm, polytope = tiny
    one = generation_states(lm, PROMPTS, 1, STEPS, chat=False, batch_size=1)
    both = generation_states(lm, PROMPTS, 1, STEPS, chat=False)
    assert one.n_steps == (STEPS, 1, STEPS)  # the row that ends early is in the batch
    assert both.texts == one.texts and both.n_steps == one.n_steps
    for a, b in zip(one.states, both.states, strict=True):
        assert np.abs(a - b).max() <= 1e-4 * np.abs(a).max()  # float32 rounding only
    kw = {"correct_first": STEPS, "chat": False}
    alone = steered_generate(polytope, lm, PROMPTS, STEPS, batch_size=1, **kw)
    batched = steered_generate(polytope, lm, PROMPTS, STEPS, **kw)
    assert alone.checked_steps == (STEPS, 1, STEPS) and sum(alone.flagged_steps) > 0
    for name in ("texts", "flagged_steps", "checked_steps", "infeasible_steps"):
        assert getattr(batched, name) == getattr(alone, name)
    for a, b in zip(alone.step_scores, batched.step_scores, strict=True):
        assert len(a) == len(b) and np.allclose(a, b, atol=1e-4 * np.abs(a).max())


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_batch_size_is_a_positive_integer(tiny, bad):
    lm, polytope = tiny
    with pytest.raises(InputError, match="batch_size"):
        generation_states(lm, PROMPTS, 1, 1, chat=False, batch_size=bad)
    with pytest.raises(InputError, match="batch_size"):
        steered_generate(polytope, lm, PROMPTS, 1, chat=False, batch_size=bad)

"""Review 64 of the safety polytope's batched generation: prompts that are not a list of strings
are refused by name in steered_generate and compare_steering (as in generation_states), and
compare_steering's plain answers (and the gate's answers) run in the caller's ``batch_size``.
A 2-layer random Llama on a word tokenizer: no SmolLM2 load."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import SafetyPolytope, compare_steering, generation_states, steered_generate

WORDS = "the cat sat on mat dog ran far away hi stop now".split()
PROMPTS = ["the cat sat on the mat", "hi", "dog ran far away the cat sat on the mat dog ran"]


@pytest.fixture(scope="module")
def tiny():
    from tiny_llama import tiny_llama, word_tokenizer

    lm = tiny_llama(word_tokenizer(WORDS), len(WORDS) + 3, hidden_size=32)
    states = generation_states(lm, PROMPTS, 1, 3, chat=False, batch_size=1).stacked()
    rng = np.random.default_rng(0)
    X = states[rng.integers(len(states), size=40)] + 0.1 * states.std() * rng.normal(size=(40, 32))
    polytope = SafetyPolytope(n_facets=2, layer=1, random_state=0, max_epochs=2)
    return lm, polytope.fit(X, X[:, 0] > np.median(X[:, 0]))


@pytest.mark.parametrize("bad", [None, 5, 2.5])
@pytest.mark.parametrize("function", [steered_generate, compare_steering])
def test_prompts_that_are_not_strings_are_refused_by_name(tiny, function, bad):
    lm, polytope = tiny  # was a raw TypeError: 'NoneType' object is not iterable
    with pytest.raises(InputError, match="prompts: expected a string or a non-empty sequence"):
        function(polytope, lm, bad, 1, chat=False)


@pytest.mark.parametrize("correction", ["project", "gate"])
def test_compare_steering_generates_in_the_callers_batch_size(tiny, monkeypatch, correction):
    lm, polytope = tiny
    sizes, generate = [], lm.generate

    def spy(*args, **kwargs):
        sizes.append(kwargs.get("batch_size", "default 8"))
        return generate(*args, **kwargs)

    monkeypatch.setattr(lm, "generate", spy)
    one = compare_steering(
        polytope, lm, PROMPTS, 2, chat=False, batch_size=1, correction=correction
    )
    assert sizes and set(sizes) == {1}  # the plain answers ran in batches of 8 before
    sizes.clear()
    three = compare_steering(
        polytope, lm, PROMPTS, 2, chat=False, batch_size=3, correction=correction
    )
    assert one.to_dict() == three.to_dict()  # greedy: the same texts in any batch

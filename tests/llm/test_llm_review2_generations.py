"""Second review: a Generations result records the seed that made its texts."""

import numpy as np

from trustlab.llm import generate_texts


class Seeds:
    """Answers each prompt with the seed it was given."""

    name = "seeds"

    def generate(self, prompts, max_new_tokens=64, *, chat=True, temperature=0.0, batch_size=8,
                 random_state=None):  # fmt: skip
        return [str(random_state) for _ in prompts]


def test_the_seed_is_recorded_with_the_settings():
    # before: temperature and max_new_tokens were kept but not the seed, so --json output of a
    # sampled run could not be repeated
    result = generate_texts(Seeds(), ["a"], 2, temperature=1.0, random_state=np.int64(7))
    assert result.random_state == 7 and result.to_dict()["random_state"] == 7
    assert generate_texts(Seeds(), ["a"], 2).to_dict()["random_state"] is None


def test_a_generators_seed_is_the_one_the_model_got():
    result = generate_texts(Seeds(), ["a", "b"], 2, random_state=np.random.default_rng(3))
    assert isinstance(result.random_state, int)
    assert result.texts == (str(result.random_state),) * 2
    again = generate_texts(Seeds(), ["a"], 2, random_state=result.random_state)
    assert again.texts == (str(result.random_state),)

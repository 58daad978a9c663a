"""Second review: what a seed means for LocalModel.completions, as its docs now say."""

import pytest

from trustlab.llm import load_model


@pytest.fixture(scope="module")
def tiny(tiny_llama_folder):
    return load_model(tiny_llama_folder)


def test_a_seed_gives_identical_prompts_identical_samples(tiny):
    # the docs said "each prompt samples from its own stream"; every prompt gets the seed's one
    # stream (as separate server requests with that seed do), so repeats of a prompt agree
    texts = [c.text for c in tiny.completions(["a"] * 3, 4, chat=False, temperature=1.0,
                                              random_state=0)]  # fmt: skip
    assert texts[0] == texts[1] == texts[2]
    alone = tiny.completions("a", 4, chat=False, temperature=1.0, random_state=0)[0].text
    assert alone == texts[0]
    others = {
        tiny.completions("a", 4, chat=False, temperature=1.0, random_state=seed)[0].text
        for seed in range(1, 6)
    }
    assert len(others | {alone}) > 1  # other seeds give other samples

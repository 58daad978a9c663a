"""Review 64: the batched hooks (_rows.py) take a row as finished at the end-of-sequence ids
``LocalModel.generate`` stops at. They derived their own from ``generation_config`` and the
tokenizer: after ``lm.model.generation_config.eos_token_id`` was changed (generate keeps the
ids it was loaded with) the answer 'hi hi hi hi' got 1 recorded state instead of 4."""

import pytest

from trustlab.safety import generation_states

WORDS = "the cat sat on mat dog ran far away hi stop now".split()
PROMPTS = ["the cat sat on the mat", "hi", "stop"]  # the random model repeats the last word


@pytest.mark.parametrize("batch_size", [1, 3])
def test_states_follow_the_tokens_generate_produced(batch_size):
    from tiny_llama import tiny_llama, word_tokenizer

    tokenizer = word_tokenizer(WORDS)
    lm = tiny_llama(tokenizer, len(WORDS) + 3, hidden_size=32)
    lm.model.generation_config.eos_token_id = tokenizer.convert_tokens_to_ids("hi")
    got = generation_states(lm, PROMPTS, 1, 4, chat=False, batch_size=batch_size)
    assert got.texts == ("mat mat mat mat", "hi hi hi hi", "stop stop stop stop")
    assert got.n_steps == (4, 4, 4)  # one state per generated token (was (4, 1, 4))

"""Review 58: LocalModel.generate samples with any seed check_seed accepts (an int >= 0), also one
of 2**64 or more, which torch.manual_seed refused with a raw ValueError after the checks."""

from __future__ import annotations

from tiny_llama import tiny_llama, word_tokenizer


def test_generate_samples_with_a_seed_beyond_64_bits():
    import torch

    words = "the cat sat on a mat".split()
    lm = tiny_llama(word_tokenizer(words), len(words) + 3, hidden_size=16)
    before = torch.random.get_rng_state()
    seed = 2**64 + 5
    first = lm.generate(["the cat", "a mat"], 4, chat=False, temperature=1.0, random_state=seed)
    again = lm.generate(["the cat", "a mat"], 4, chat=False, temperature=1.0, random_state=seed)
    assert first == again and len(first) == 2
    assert torch.equal(torch.random.get_rng_state(), before)  # the global stream untouched

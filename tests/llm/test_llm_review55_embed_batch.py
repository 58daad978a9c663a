"""Review pass 55: ``embed_texts(batch_size=)`` is checked as every other ``batch_size`` is (an
InputError naming it, before the embedder loads); 0 raised sentence-transformers' ValueError
and 2.5 a TypeError, after the 10 s load."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm.embeddings import embed_texts


class Ones:
    def encode(self, texts, batch_size=32):
        return np.ones((len(texts), 3))


@pytest.mark.parametrize("embedder", [None, Ones()])
@pytest.mark.parametrize("batch_size", [0, -1, 2.5, "8"])
def test_a_bad_batch_size_is_refused_naming_it(embedder, batch_size):
    with pytest.raises(InputError, match=r"^batch_size: expected an integer >= 1"):
        embed_texts(["a", "b"], embedder, batch_size=batch_size)

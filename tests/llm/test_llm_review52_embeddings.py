"""embed_texts names a NaN or infinity that an embedder returns (review pass 52)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.llm.embeddings import embed_texts


class _Fixed:
    def __init__(self, row):
        self.row = row

    def encode(self, texts):
        return np.array([self.row] * len(texts))


@pytest.mark.parametrize(("value", "word"), [(np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "-inf")])
def test_a_non_finite_embedding_is_named(value, word):
    with pytest.raises(InputError, match=rf"embedder: expected finite values, got {word} at row 0"):
        embed_texts(["a", "b"], _Fixed([value, 1.0]))


def test_the_misuse_monitor_names_the_nan():
    from trustlab.safety.misuse import ReconstructionMonitor

    with pytest.raises(InputError, match="got NaN at row 0, column 0"):
        ReconstructionMonitor(embedder=_Fixed([np.nan, 1.0])).score(["xyz"], "a")


@pytest.mark.parametrize("raw", [[1.0, 2.0], [["x", "y"]], np.array([[1 + 2j, 0]])])
def test_other_shapes_still_ask_for_a_2d_numeric_array(raw):
    class Raw:
        def encode(self, texts):
            return raw

    with pytest.raises(InputError, match="2-D numeric array"):
        embed_texts(["a"], Raw())


def test_finite_rows_are_normalised():
    out = embed_texts(["a"], _Fixed([3.0, 4.0]))
    np.testing.assert_allclose(out, [[0.6, 0.8]])


def test_one_string_is_one_text_not_its_characters():
    # before: list("abc") gave three rows, one per character
    assert embed_texts("abc", _Fixed([3.0, 4.0])).shape == (1, 2)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [([], "at least one string"), (["a", None], "a string or a sequence of strings")],
)
def test_bad_texts_are_named_as_texts(texts, expected):
    # before: [] blamed the embedder ('expected encode(list of str) to return a 2-D numeric
    # array, got an array of shape (0, 2)'); None reached the embedder
    with pytest.raises(InputError, match=f"^texts: expected {expected}"):
        embed_texts(texts, _Fixed([3.0, 4.0]))

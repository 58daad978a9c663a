"""Review 67 (E): LocalModel.activations reads a 0-d array of layers as one layer, as a numpy
int, and refuses a 0-d bool or float array by name. Measured on d8070d9a (local.py as at
89f467b3) with a tiny Llama: activations(texts, np.array(1)) stopped on Python's raw
"TypeError: len() of unsized object" (a 0-d array is an ndarray, so it went to the sequence
branch), while np.int64(1) gave the (n, hidden) states and 1.0 or True were
"layers: expected an integer or a sequence of integers"."""

import numpy as np
import pytest

from tiny_llama import abcd_llama
from trustlab.errors import InputError

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def lm():
    return abcd_llama(8, 0)


def test_a_zero_d_integer_array_is_one_layer(lm):
    got = lm.activations(["a b"], np.array(1), "last", chat=False)
    assert got.shape == (1, 8)
    assert np.array_equal(got, lm.activations(["a b"], np.int64(1), "last", chat=False))


@pytest.mark.parametrize("layers", [np.array(True), np.array(1.0), np.array(5)])
def test_a_zero_d_array_that_is_no_layer_is_refused_as_layers(lm, layers):
    with pytest.raises(InputError, match=r"^layers: expected an integer") as e:
        lm.activations(["a b"], layers, "last", chat=False)
    assert e.value.argument == "layers"

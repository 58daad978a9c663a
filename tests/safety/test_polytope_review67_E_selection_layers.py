"""Review 67 (E): select_detector / compare_detectors refuse ``layers`` that is no sequence by
name. Measured on d8070d9a (selection.py as at 54ab3004): layers=1, np.array(1) or None
stopped on Python's raw "TypeError: 'int' object is not iterable" ("iteration over a 0-d
array", "'NoneType' object is not iterable"); a sequence holding a bool, a float or a string was
already "layers: expected an integer >= 0". Now each is an InputError naming layers before any
fit; sequences read as before."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.polytope.selection import compare_detectors, select_detector

_ACTS = np.random.default_rng(0).normal(size=(16, 1, 3))
_UNSAFE = np.arange(16) % 2 == 0


@pytest.mark.parametrize("layers", [1, np.array(1), None, np.int64(0)])
def test_layers_that_is_no_sequence_is_refused_by_name(layers):
    with pytest.raises(InputError, match=r"^layers: expected a sequence of layers") as e:
        select_detector(_ACTS, _UNSAFE, layers)
    assert e.value.argument == "layers"
    with pytest.raises(InputError, match=r"^layers: expected a sequence of layers"):
        compare_detectors(_ACTS, _UNSAFE, _ACTS, _UNSAFE, layers)


@pytest.mark.parametrize("layers", [[True], [1.0], ["1"]])
def test_a_layer_that_is_no_integer_is_still_refused(layers):
    with pytest.raises(InputError, match=r"^layers: expected an integer >= 0"):
        select_detector(_ACTS, _UNSAFE, layers)


@pytest.mark.parametrize("layers", [[4, 5], (4, 5), np.array([4, 5]), range(4, 6)])
def test_sequences_read_as_before(layers):
    # read as two layers: refused against the one slice of acts, before any fit
    with pytest.raises(InputError, match=r"^layers: expected 1 distinct layers .*\[4, 5\]"):
        select_detector(_ACTS, _UNSAFE, layers)

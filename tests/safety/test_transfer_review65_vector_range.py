"""A SteeringVector of finite float64 values past float32's range (review 65): the float32 copy
overflowed with a numpy RuntimeWarning and the error said 'expected finite values, got an array
of shape (2,) and dtype float32' of a finite input (transfer_vector returns float64, so a map of
huge activations met it). Now one InputError that says float32's range and the value."""

import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.transfer import SteeringVector


def _vector(values):
    return SteeringVector(
        vector=np.array(values), layer=0, kind="prompt", model="x", n_pairs=1, n_positive=1,
        n_negative=1,
    )  # fmt: skip


def test_a_vector_past_float32_says_so_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the overflow in the cast leaked as a RuntimeWarning
        with pytest.raises(InputError) as err:
            _vector([1e39, 1.0])
    assert err.value.argument == "vector"
    assert "float32's range" in str(err.value) and "1e+39" in str(err.value)
    with pytest.raises(InputError, match="finite values"):
        _vector([np.nan, 1.0])
    assert _vector([3e38, -1.0]).vector.dtype == np.float32  # inside the range: kept

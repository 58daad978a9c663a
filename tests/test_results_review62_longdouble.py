"""to_jsonable on numpy long doubles (review 62): their tolist() gives the scalar back."""

import json

import numpy as np
import pytest

from trustlab._results import to_jsonable
from trustlab.errors import InputError


def test_long_doubles_become_floats():
    value = {"a": np.longdouble(1.5), "b": np.array([np.longdouble(2), np.longdouble("inf")])}
    out = to_jsonable(value, "data")
    assert out == {"a": 1.5, "b": [2.0, None]}
    assert type(out["a"]) is float
    json.dumps(out, allow_nan=False)


def test_a_complex_long_double_is_an_input_error():
    with pytest.raises(InputError, match=r"data\[0\]: expected JSON-safe values"):
        to_jsonable([np.clongdouble(1 + 2j)], "data")

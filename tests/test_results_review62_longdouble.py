"""to_jsonable on numpy long doubles and on date and time keys (review 62)."""

import datetime
import json

import numpy as np
import pandas as pd
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


def test_date_and_time_keys_are_written_as_their_values():
    days = np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[ns]")
    out = to_jsonable({days[0]: 1, days[1]: 2, np.timedelta64(2, "ns"): 3}, "data")
    # as values these read as ISO 8601 texts; as keys they read 1577836800000000000 (ns ints)
    assert list(out) == [*to_jsonable(days), "P0DT0H0M0.000000002S"]
    assert to_jsonable({pd.Timestamp("2020-01-01"): 1, datetime.date(2021, 5, 6): 2}) == {
        "2020-01-01T00:00:00": 1,
        "2021-05-06": 2,
    }

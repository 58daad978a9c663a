"""A numpy long double mapping key is written as a float key is (diff review 62 D)."""

import numpy as np

from trustlab._results import to_jsonable


def test_a_long_double_key_is_written_as_a_float_key():
    # was refused ('keys: expected strings or numbers'): item() gives the long double back
    keys = {np.longdouble(1.5): 1, np.longdouble(2): 2}
    assert to_jsonable(keys, "data") == {"1.5": 1, "2.0": 2}
    assert to_jsonable(keys, "data") == to_jsonable({np.float64(1.5): 1, 2.0: 2}, "data")

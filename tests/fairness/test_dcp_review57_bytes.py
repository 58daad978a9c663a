"""Review 57: bytes labels or groups (numpy ``S`` values, as HDF5 files give them) ran, but
``to_dict()`` raised though the docs say it is JSON-safe; they are now written as text."""

import json

import numpy as np

from trustlab._results import to_jsonable
from trustlab.fairness import multiclass_dcp


def test_bytes_groups_give_a_json_safe_result_with_the_groups_as_text():
    groups = np.array([b"north", b"north", b"south", b"south"])
    res = multiclass_dcp([0, 1, 0, 1], [0, 1, 1, 1], groups, aggregate=False)
    out = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert out["inputs"]["groups"] == ["north", "south"]


def test_bytes_values_and_keys_become_utf8_text_and_undecodable_bytes_stay_distinct():
    value = {b"k": np.array([b"a", "é".encode(), b"\xff"]), np.bytes_(b"n"): np.bytes_(b"x")}
    assert to_jsonable(value) == {"k": ["a", "é", "\\xff"], "n": "x"}

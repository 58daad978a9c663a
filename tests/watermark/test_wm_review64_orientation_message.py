"""diff review 64 F of 1b86832f: orientation_of_mask's new refusal of other floats said only
"got 'other values'" (which values, how many, of what dtype: not told), and a string array was
shown as "got StrDType dtype('<U1')". Now the count, the dtype and one such value are named, and a
non-numeric array is described as an array."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import orientation_of_mask


def test_other_floats_are_named_in_the_message():
    heat = np.where(np.eye(4, dtype=bool), 1.0, 0.25)  # 0.25 and 1.0 are exact in binary
    with pytest.raises(InputError) as info:
        orientation_of_mask(heat)
    msg = str(info.value)
    assert msg.startswith("mask: expected a 2-D boolean array (or floats 0 and 1")
    assert msg.endswith("got 12 of 16 float64 cells neither 0 nor 1, such as 0.25")
    with pytest.raises(InputError, match=r"mask: .*got an array of shape \(2, 2\) and dtype <U1"):
        orientation_of_mask(np.array([["a", "b"], ["c", "d"]]))
    assert orientation_of_mask(np.eye(4, dtype=np.float16)) == "diagonal"  # 0/1 floats read

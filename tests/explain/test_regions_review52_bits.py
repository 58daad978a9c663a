"""A 16-bit image (0..65535, e.g. a 16-bit PNG read as it is) was told '8-bit images: divide by
255 first', which leaves values up to 257 (review 52); beyond 16 bits no division is suggested."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.inputs import check_images  # noqa: E402


def test_sixteen_bit_images_are_told_to_divide_by_65535():
    x = np.zeros((1, 3, 8, 8), dtype=np.uint16)
    x[0, 0, 0, 0] = 65533
    with pytest.raises(InputError) as info:
        check_images(x, "X")
    text = str(info.value)
    assert text.startswith("X: ") and "from 0 to 65533" in text
    assert "16-bit images: divide by 65535" in text and "255" not in text


def test_eight_bit_hint_stays_and_larger_values_get_none():
    x = np.zeros((1, 3, 8, 8))
    x[0, 0, 0, 0] = 200.0
    with pytest.raises(InputError, match=r"8-bit images: divide by 255 first\)$"):
        check_images(x, "X")
    x[0, 0, 0, 0] = 1e6
    with pytest.raises(InputError, match=r"got values from 0 to 1e\+06$"):
        check_images(x, "X")


def test_shape_errors_name_the_dtype_that_came():
    """A uint8 or float64 array of the wrong shape or size was described by its float32 copy
    ('dtype torch.float32')."""
    with pytest.raises(InputError, match=r"shape \(1, 1, 3, 8, 8\) and dtype uint8$"):
        check_images(np.zeros((1, 1, 3, 8, 8), dtype=np.uint8), "X")
    with pytest.raises(InputError, match=r"shape \(2, 3, 8, 16\) and dtype float64$"):
        check_images(np.zeros((2, 3, 8, 16)), "X", size=(8, 8))

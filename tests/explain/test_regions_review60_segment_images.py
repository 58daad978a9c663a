"""superpixels says what it refused (review 60).

A (1, 3, 1, 1) image was refused as 'expected an array of shape (n, 3, H, W) with n >= 1',
though n was 1 (the sides must be at least 2); 8-bit images were described as the float32 copy
made of them, not as the uint8 array that came.
"""

import numpy as np
import pytest

pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import superpixels  # noqa: E402


def test_a_one_pixel_image_is_refused_for_its_sides():
    with pytest.raises(InputError, match=r"H, W >= 2, got an array of shape \(1, 3, 1, 1\)"):
        superpixels(np.zeros((1, 3, 1, 1), np.float32), n_segments=4)


def test_an_8_bit_image_is_described_as_it_came():
    with pytest.raises(InputError, match=r"finite values in \[0, 1\], got .*dtype uint8"):
        superpixels(np.full((1, 3, 8, 8), 200, np.uint8), n_segments=4)

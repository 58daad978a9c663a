"""Images outside [0, 1] are refused with the range they have (and, for 8-bit images, what to do),
not with the dtype they were converted to (an 8-bit file used to be reported as 'dtype
torch.float32')."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.inputs import check_images  # noqa: E402


def test_eight_bit_images_are_told_to_divide_by_255():
    x = np.zeros((2, 3, 8, 8), dtype=np.uint8)
    x[0, 0, 0, 0] = 255
    with pytest.raises(InputError, match=r"^X: .*got values from 0 to 255 .*divide by 255"):
        check_images(x, "X")


def test_negative_and_non_finite_values_are_named():
    x = np.full((1, 3, 8, 8), -0.5)
    x[0, 0, 0, 0] = 1.0
    with pytest.raises(InputError, match=r"^X: .*got values from -0\.5 to 1$"):
        check_images(x, "X")
    x = np.zeros((1, 3, 8, 8))
    x[0, 0, 0, 0] = np.nan
    with pytest.raises(InputError, match=r"^X: expected finite values.*NaN or infinite"):
        check_images(x, "X")

"""Review 55 of the watermark area: an empty image array, the invisible-mark functions' inputs,
two of the page's numbers against docs/results, and PLCC on scores of any magnitude."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import WatermarkPredictor


def test_an_empty_image_array_is_an_input_error():
    """An (0, H, W, 3) array reached np.stack and raised numpy's 'need at least one array to
    concatenate'; an empty list already gave the InputError."""
    with pytest.raises(
        InputError, match=r"^images: expected an \(n, H, W, 3\) uint8 array \(n >= 1\)"
    ):
        WatermarkPredictor().fit(
            np.zeros((0, 16, 16, 3), np.uint8),
            scores=[],
            masks=np.zeros((0, 16, 16), bool),
            content_types=[],
        )

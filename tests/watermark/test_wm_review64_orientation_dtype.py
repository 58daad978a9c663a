"""orientation_of_mask read any nonzero cell as the mask (review 64): a heatmap of probabilities
whose 0.5 region runs diagonally was called "horizontal" (all 32 x 32 cells nonzero), NaN cells
counted as the mask and a string array gave "horizontal". Now bool, integer (nonzero) and 0/1
float masks are read; other floats, NaN and non-numbers are refused naming ``mask``."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import orientation_of_mask


def _diagonal() -> np.ndarray:
    return np.eye(32, dtype=bool)


def test_probability_map_nan_and_strings_are_refused():
    heat = np.where(_diagonal(), 0.9, 0.05)
    with pytest.raises(InputError, match="mask"):
        orientation_of_mask(heat)
    nan = np.where(_diagonal(), 1.0, np.nan)
    with pytest.raises(InputError, match="mask"):
        orientation_of_mask(nan)
    with pytest.raises(InputError, match="mask"):
        orientation_of_mask(np.array([["a", "b"], ["c", "d"]]))


@pytest.mark.parametrize("dtype", [bool, np.uint8, np.int64, np.float32, np.float64])
def test_zero_one_masks_of_any_numeric_dtype_read_alike(dtype):
    m = _diagonal()
    assert orientation_of_mask(m.astype(dtype)) == "diagonal"
    assert orientation_of_mask(m.astype(np.uint8) * 255) == "diagonal"  # nonzero integers

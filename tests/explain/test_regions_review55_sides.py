"""fit's refusal of images whose sides are not multiples of 8 (review 55) described the float32
tensor the images were converted to ('dtype torch.float32' for a float64 or uint8-range numpy
array), as the other image errors no longer do; it describes the array that came."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import BlackBoxClassifier, RegionSparseClassifier  # noqa: E402


@pytest.mark.parametrize("cls", [RegionSparseClassifier, BlackBoxClassifier])
def test_side_error_describes_the_array_that_came(cls):
    x = np.zeros((2, 3, 36, 40))  # float64
    with pytest.raises(InputError, match="multiples of 8") as info:
        cls(max_epochs=1).fit(x, [0, 1])
    assert "shape (2, 3, 36, 40) and dtype float64" in str(info.value)
    assert "torch" not in str(info.value)

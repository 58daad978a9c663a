"""Review 55: GlobalStatisticsBaseline refuses pixel values outside 0-255, its documented range
(300 was taken)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import GlobalStatisticsBaseline


@pytest.mark.parametrize("value", [300.0, -1.0, 255.5])
def test_the_global_statistics_baseline_refuses_pixels_outside_0_255(value):
    images = np.full((2, 8, 8, 3), 10.0)
    images[1, 0, 0, 0] = value
    with pytest.raises(InputError, match=r"^images: expected pixel values 0-255, got .*from"):
        GlobalStatisticsBaseline().fit(images, [1.0, 2.0])
    fitted = GlobalStatisticsBaseline().fit(images[:1].repeat(2, 0), [1.0, 2.0])
    with pytest.raises(InputError, match=r"^images: expected pixel values 0-255"):
        fitted.predict(images)

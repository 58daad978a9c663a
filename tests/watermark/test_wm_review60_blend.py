"""blend took a mark that is not uint8: a float 0-1 mark blended as nearly black, a NaN one gave
an all-black image and a NaN shift with only numpy's cast warning (review 60)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import blend


def test_blend_refuses_a_mark_that_is_not_uint8():
    cover = np.full((4, 4, 3), 100, np.uint8)
    mark = np.full((4, 4, 3), 200, np.uint8)
    mask = np.zeros((4, 4), bool)
    mask[0, 0] = True
    assert int(blend(cover, mark, mask, 0.25)[0][0, 0, 0]) == 123
    for bad in (mark / 255.0, np.full((4, 4, 3), np.nan), mark.astype(str)):
        with pytest.raises(InputError, match="mark: expected a uint8 array"):
            blend(cover, bad, mask, 0.25)

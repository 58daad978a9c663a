"""random_area_masks refuses text and bools as kept_fraction (review 66).

Measured before: _per_image_fraction read kept_fraction through np.asarray(dtype=float64), which
parses text and casts bools: random_area_masks(seg, "0.5") gave the masks of 0.5, ["1", "0"] those
of [1.0, 0.0], True (or np.True_, np.array([True, False])) those of 1.0 (every region kept),
though the fidelity curves of the same module refuse "0.2" and True as levels. Now InputError
naming kept_fraction ('a number or n numbers in [0, 1]'); numbers, numpy numbers and arrays of
them give the same masks as before.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.regions.metrics import random_area_masks

SEG = np.stack([np.repeat(np.arange(4), 4).reshape(4, 4)] * 2)


@pytest.mark.parametrize(
    "fraction",
    ["0.5", b"0.5", ["1", "0"], True, np.True_, np.array([True, False]), np.array("0.5")],
)
def test_text_and_bools_are_refused(fraction):
    with pytest.raises(InputError) as info:
        random_area_masks(SEG, fraction, random_state=0)
    assert info.value.argument == "kept_fraction"


@pytest.mark.parametrize(
    "fraction, areas",
    [(0.5, [0.5, 0.5]), (np.float32(0.25), [0.25, 0.25]), (1, [1.0, 1.0]),
     (np.array([1.0, 0.0]), [1.0, 0.0]), ([np.int64(0), 0.75], [0.0, 0.75])],
)  # fmt: skip
def test_numbers_still_give_their_areas(fraction, areas):
    masks = random_area_masks(SEG, fraction, random_state=0)
    assert masks.reshape(2, -1).mean(1).tolist() == areas

"""Review 67 (G3): random_area_masks accepts numpy unsigned integers as kept_fraction.

The docs say ``kept_fraction : float or array (n,) in [0, 1]``: a number. 8ca50d91 refuses text
and bools by dtype kind (``"iuf"``) and its tests check signed integers and floats only, so a
kind list without ``"u"`` (refusing np.uint8(1) or a uint8 array of 0/1 as "no fraction") would
pass them. Unsigned numbers give the areas their values say; out of [0, 1] they are refused as
fractions, like any number.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.regions.metrics import random_area_masks

SEG = np.stack([np.repeat(np.arange(4), 4).reshape(4, 4)] * 2)


@pytest.mark.parametrize(
    "fraction, areas",
    [(np.uint8(1), [1.0, 1.0]), (np.uint64(0), [0.0, 0.0]),
     (np.array([1, 0], dtype=np.uint8), [1.0, 0.0]), ([np.uint16(0), 0.75], [0.0, 0.75])],
)  # fmt: skip
def test_unsigned_numbers_give_their_areas(fraction, areas):
    masks = random_area_masks(SEG, fraction, random_state=0)
    assert masks.reshape(2, -1).mean(1).tolist() == areas


def test_an_unsigned_number_above_one_is_refused_as_a_fraction():
    with pytest.raises(InputError, match=r"fractions in \[0, 1\]") as info:
        random_area_masks(SEG, np.uint8(2), random_state=0)
    assert info.value.argument == "kept_fraction"

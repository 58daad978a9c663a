"""The region metrics refuse ragged masks and segment maps in words (review 66).

Measured before: a ragged nested list (rows of unequal length) given as masks, truth or segments
escaped as numpy's raw ValueError 'setting an array element with a sequence. The requested array
has an inhomogeneous shape after 2 dimensions...' from localisation_precision, mask_iou, pxap,
pxap_per_image (truth), random_area_masks and deletion_curve/insertion_curve (segments). Now
InputError naming the argument (masks, truth, segments), as for other malformed arrays; regular
input unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.regions.metrics import (
    deletion_curve,
    insertion_curve,
    localisation_precision,
    mask_iou,
    pxap,
    pxap_per_image,
    random_area_masks,
)

RAGGED = [[[1, 0], [1]]]
MASK = np.array([[[1, 0], [1, 1]]], dtype=bool)
SOFT = np.full((1, 2, 2), 0.5)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: localisation_precision(RAGGED, MASK), "masks"),
        (lambda: mask_iou(MASK, RAGGED), "truth"),
        (lambda: pxap(SOFT, RAGGED), "truth"),
        (lambda: pxap_per_image(SOFT, RAGGED), "truth"),
        (lambda: random_area_masks(RAGGED, 0.5), "segments"),
    ],
)
def test_ragged_masks_and_maps_are_refused(call, argument):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.argument == argument


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
def test_ragged_segments_of_a_curve_are_refused(curve):
    pytest.importorskip("torch")
    x = np.ones((1, 1, 2, 2), dtype=np.float32)
    with pytest.raises(InputError) as info:
        curve(lambda z: z.sum((2, 3)), x, RAGGED, [[1.0, 1.0]])
    assert info.value.argument == "segments"


def test_regular_input_unchanged():
    assert localisation_precision(MASK, MASK).tolist() == [1.0]
    assert mask_iou(MASK.astype(int).tolist(), MASK).tolist() == [1.0]
    assert random_area_masks([[[0, 1], [1, 1]]], 1.0, random_state=0).all()

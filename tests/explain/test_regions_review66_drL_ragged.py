"""Ragged images, labels and masks elsewhere in the region metrics (diff review 66 L of 14fd4b78).

14fd4b78 made the masks, truth and segments of the region metrics refuse a ragged nested list in
words; the images of deletion_curve/insertion_curve (the same functions) and the labels and masks
of evaluate_regions still escaped as numpy's raw ValueError 'setting an array element with a
sequence. The requested array has an inhomogeneous shape ...' (images given as text: torch's raw
TypeError). Now each is an InputError naming its argument, with the message a malformed array of
the right kind already had.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.explain.regions import (  # noqa: E402
    bam_lite,
    evaluate_regions,
    load_checkpoint,
)
from trustlab.explain.regions.metrics import deletion_curve, insertion_curve  # noqa: E402

SEG = [[[0, 0], [1, 1]]]


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
@pytest.mark.parametrize("images", [[[[[1.0, 1.0], [1.0]]]], "abc"])
def test_ragged_images_of_a_curve_are_refused(curve, images):
    with pytest.raises(InputError) as info:
        curve(lambda z: z.sum((2, 3)), images, SEG, [[1.0, 1.0]])
    assert info.value.argument == "images"


def test_regular_images_of_a_curve_unchanged():
    x = np.array([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=np.float32)

    def classify(z):
        return torch.stack([z[:, 0, 0, 0], z[:, 0, 1, 1]], 1)

    a = deletion_curve(classify, x, SEG, [[1.0, 0.5]], (0.5,))
    b = deletion_curve(classify, x.tolist(), SEG, [[1.0, 0.5]], (0.5,))  # a nested list of floats
    assert a.agreement.tolist() == b.agreement.tolist() == [0.0]


@pytest.fixture(scope="module")
def shipped():
    data = bam_lite(2, size=64, label="object", object_source="shapes", random_state=3)
    return load_checkpoint("p2p_fixed"), data, np.asarray(data.class_names)[data.labels]


def test_ragged_labels_and_masks_of_evaluate_regions_are_refused(shipped):
    model, data, y = shipped
    none = dict(deltas=(), deletion=(), insertion=())
    ragged_masks = [data.masks[0].tolist(), data.masks[1].tolist()[:-1]]
    with pytest.raises(InputError) as info:
        evaluate_regions({"f": model}, data.images, y, ragged_masks, **none)
    assert info.value.argument == "masks"
    with pytest.raises(InputError) as info:
        evaluate_regions({"f": model}, data.images, [[y[0]], [y[1], y[0]]], data.masks, **none)
    assert info.value.argument == "labels"
    ev = evaluate_regions({"f": model}, data.images, list(y), data.masks.tolist(), **none)
    assert len(ev.accuracy) == 1

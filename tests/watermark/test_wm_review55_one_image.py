"""Review 55 (second pass): the one-image check of answer/level_logits on a list of images of
several sizes. 3bf012b moved it to np.asarray, which raises numpy's ValueError ('inhomogeneous
shape') on such a list; before, it was the InputError 'image: expected one ... got 2 images'."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import TemplateBackend


def test_images_of_several_sizes_are_not_one_image():
    a, b = np.zeros((16, 16, 3), np.uint8), np.zeros((24, 16, 3), np.uint8)
    backend = TemplateBackend()
    for call in (lambda: backend.level_logits([a, b]), lambda: backend.answer([a, b], "Where?")):
        with pytest.raises(InputError, match=r"^image: expected one \(H, W, 3\) uint8 image, got"):
            call()

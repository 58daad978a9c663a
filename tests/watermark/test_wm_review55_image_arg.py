"""Review 55: a backend's answer/level_logits name their argument ``image`` (a greyscale array or
PIL "L" image was refused as "images[0]")."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from trustlab.errors import InputError
from trustlab.watermark.backends import HFVisionLanguageBackend, TemplateBackend

GREY = np.random.default_rng(55).integers(0, 256, (16, 16), dtype=np.uint8)


@pytest.mark.parametrize(
    "image", [GREY, Image.fromarray(GREY), np.dstack([GREY] * 4), np.zeros((4, 4, 3), np.uint8)]
)
def test_answer_and_level_logits_name_their_image_argument(image, tmp_path):
    (tmp_path / "config.json").write_text("{}")  # never read: the image is refused first
    for backend in (TemplateBackend(), HFVisionLanguageBackend(tmp_path)):
        with pytest.raises(InputError, match=r"^image: expected an RGB image of shape") as a:
            backend.answer(image, "Where is the watermark?")
        with pytest.raises(InputError, match=r"^image: expected an RGB image of shape") as b:
            backend.level_logits(image)
        assert a.value.argument == b.value.argument == "image"

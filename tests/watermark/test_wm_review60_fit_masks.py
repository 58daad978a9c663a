"""WatermarkPredictor.fit took 0/255 masks (the heatmap loss went negative, -10.6) and NaN ones
(loss NaN); string scores ended in a raw ValueError (review 60)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import WatermarkPredictor


def _fit(masks, scores=(1.0, 5.0)):
    images = np.random.default_rng(0).integers(0, 256, (2, 64, 64, 3)).astype(np.uint8)
    model = WatermarkPredictor(
        input_size=64, widths=(4, 4, 4, 4, 4), max_epochs=1, batch_size=2, random_state=0
    )
    return model.fit(images, scores=list(scores), masks=masks, content_types=["logo", "invisible"])


def test_fit_refuses_masks_that_are_not_zero_one():
    mask = np.zeros((2, 64, 64), bool)
    mask[0, 8:24, 8:40] = True
    loss = _fit(mask).history_.loss
    assert loss == _fit(mask.astype(np.float32)).history_.loss  # 0/1 numbers: the same fit
    for bad, got in ((mask.astype(np.uint8) * 255, "uint8 values from 0 to 255"),
                     (np.where(mask, np.nan, 0.0), "float64 values"),
                     (mask.astype(str), "<U5 values")):  # fmt: skip
        with pytest.raises(InputError, match=f"masks: expected bool masks .*got '{got}"):
            _fit(bad)
    with pytest.raises(InputError, match="scores: expected 2 finite scores"):
        _fit(mask, scores=("a", "b"))

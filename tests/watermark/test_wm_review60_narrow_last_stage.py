"""A WatermarkPredictor whose last stage is 1 x 1 (input_size = 2 ** len(widths)) with 1, 2, 4 or
8 channels normalises groups of one value, which GroupNorm refuses for a batch of one image: fit
with a batch of one, or predict of one image, ended in torch's raw ValueError 'Expected more than
1 value per channel when training' (review 60). Such widths are now refused up front."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import WatermarkPredictor


@pytest.mark.parametrize("last", [1, 2, 4, 8])
def test_a_narrow_one_by_one_last_stage_is_refused(last):
    model = WatermarkPredictor(input_size=32, widths=(8, 8, 8, 8, last))
    with pytest.raises(InputError, match="widths: expected a last stage of other than 1, 2, 4"):
        model.check_params()


def test_other_last_stages_fit_and_predict_one_image():
    WatermarkPredictor(input_size=64, widths=(8, 8, 8, 8, 8)).check_params()  # 2 x 2: fine
    WatermarkPredictor(input_size=32, widths=(8, 8, 8, 8, 16)).check_params()  # 2 per group
    image = np.random.default_rng(0).integers(0, 256, (1, 32, 32, 3)).astype(np.uint8)
    mask = np.zeros((1, 32, 32), bool)
    mask[0, 4:12, 4:20] = True
    model = WatermarkPredictor(
        input_size=32, widths=(4, 4, 4, 4, 3), max_epochs=1, batch_size=1, random_state=0
    ).fit(image, scores=[1.0], masks=mask, content_types=["logo"])
    assert model.predict(image).scores.shape == (1,)


@pytest.mark.parametrize(("size", "n_stages"), [(48, 5), (80, 6), (96, 6)])
def test_sizes_between_powers_of_two_end_at_two_by_two_and_are_taken(size, n_stages):
    # the stride-2 convolutions round up (48 -> 24 -> 12 -> 6 -> 3 -> 2): the last stage is
    # 2 x 2 and 8 channels fit and predict one image (measured); was refused as 1 x 1 (diff review 60 C)
    WatermarkPredictor(input_size=size, widths=(8,) * n_stages).check_params()

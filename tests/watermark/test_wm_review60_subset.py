"""WatermarkDataset.subset took a bool mask shorter (or longer) than the dataset, selecting
from its first images, where numpy refuses such a mask (review 60)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.fixture(scope="module")
def clean3():
    return synthesize(3, random_state=0, clean_fraction=1.0)  # no marks to draw: cheap


def test_subset_refuses_a_bool_mask_of_another_length(clean3):
    assert clean3.subset(np.array([True, False, True])).n_images == 2
    for mask in ([True, False], [True, False, False, False]):
        with pytest.raises(InputError, match="indices: expected a bool mask of 3 values"):
            clean3.subset(mask)

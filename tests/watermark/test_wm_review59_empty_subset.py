"""WatermarkDataset.subset([]) gives no images, as an empty int array does (diff review 59 B):
numpy reads [] as floats, so the plain list was refused as "expected a 1-D sequence of image
indices" while regions' and EquiGX's subset take it."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


def test_an_empty_list_selects_no_images():
    data = synthesize(3, random_state=0)
    assert data.subset([]).n_images == 0
    assert data.subset(()).n_images == data.subset(np.array([], dtype=int)).n_images == 0
    assert data.subset([2, 0]).n_images == 2
    with pytest.raises(InputError, match="indices"):
        data.subset([0.5])
    with pytest.raises(InputError, match="indices"):
        data.subset([[]])

"""Training labels with a missing value (None or NaN) are refused with an InputError naming ``y``
(None used to end in a TypeError from sorting, NaN to be trained on as a class of its own)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import BlackBoxClassifier, RegionSparseClassifier  # noqa: E402

IMAGES = np.random.default_rng(0).random((4, 3, 32, 32)).astype(np.float32)


@pytest.mark.parametrize(
    "labels",
    [
        [1, None, 1, None],
        ["a", None, "a", "b"],
        [1.0, np.nan, 1.0, 2.0],
        np.array([0.0, 1.0, np.nan, 1.0], dtype=object),
    ],
)
@pytest.mark.parametrize("make", [
    lambda: RegionSparseClassifier(n_segments=8, pretrain_epochs=0, max_epochs=1),
    lambda: BlackBoxClassifier(max_epochs=1),
])  # fmt: skip
def test_missing_labels_are_refused(make, labels):
    with pytest.raises(InputError, match=r"^y: .*no None or NaN") as info:
        make().fit(IMAGES, labels)
    assert info.value.argument == "y"

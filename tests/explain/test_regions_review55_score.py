"""score of the region-sparse models (review 55): labels outside the model's classes (the
checkpoint data's integer labels for a model of shape names) gave accuracy 0.0 without a word,
and a column of labels (n, 1) was compared with every prediction (0.5 where every prediction was
right); both are refused naming y, as fit and evaluate_regions refuse them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import bam_lite, load_checkpoint  # noqa: E402
from trustlab.explain.regions.checkpoints import TEST_DATA  # noqa: E402


@pytest.fixture(scope="module")
def data():
    d = bam_lite(**{**TEST_DATA, "n_images": 4, "random_state": 5})  # as the checkpoints'
    return d, np.asarray(d.class_names)[d.labels]


@pytest.mark.parametrize("name", ["p2p_fixed", "blackbox"])
def test_score_refuses_labels_it_cannot_predict(data, name):
    d, y = data
    model = load_checkpoint(name)
    right = float(np.mean(model.predict(d.images) == y))
    assert model.score(d.images, y) == right
    for labels, says in (
        (d.labels, "got 4 of 4 outside them"),
        (y[:, None], "expected 4 labels (one per image)"),
        (y[:3], "expected 4 labels (one per image)"),
    ):
        with pytest.raises(InputError, match=r"^y: ") as info:
            model.score(d.images, labels)
        assert says in str(info.value)

"""BlackBoxClassifier.score keeps scikit-learn's ``sample_weight`` (review 55, second pass).

7f9d845 gave it its own ``score(X, y)`` (to refuse labels outside ``classes_``) in place of
ClassifierMixin's ``score(X, y, sample_weight=None)``, so a weighted score became a TypeError.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import bam_lite, load_checkpoint  # noqa: E402
from trustlab.explain.regions.checkpoints import TEST_DATA  # noqa: E402


def test_blackbox_score_takes_sample_weight():
    d = bam_lite(**{**TEST_DATA, "n_images": 6, "random_state": 7})
    y = np.asarray(d.class_names)[d.labels]
    model = load_checkpoint("blackbox")
    pred = model.predict(d.images)
    names = list(d.class_names)
    y[[1, 4]] = [names[(names.index(p) + 1) % len(names)] for p in pred[[1, 4]]]  # two wrong
    w = np.array([0.5, 1.0, 2.0, 0.0, 3.0, 1.5])
    right = pred == y
    assert not right[[1, 4]].any()
    assert model.score(d.images, y, sample_weight=w) == pytest.approx(np.sum(w * right) / w.sum())
    assert model.score(d.images, y) == pytest.approx(right.mean())
    with pytest.raises(InputError, match=r"^y: "):
        model.score(d.images, d.labels, sample_weight=w)

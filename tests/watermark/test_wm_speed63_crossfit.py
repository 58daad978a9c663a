"""Speed stop 63: without ``train``, evaluate_predictions computes each visible image's
global-statistics features once and fits the five cross-fitting folds on them; the control must
be exactly what fitting and predicting each fold on its images gives."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trustlab.watermark.evaluation import (
    GlobalStatisticsBaseline,
    evaluate_predictions,
    visibility_numbers,
)
from trustlab.watermark.nr import WatermarkPredictions


@dataclass
class _Data:  # the fields evaluate_predictions reads, on tiny random images
    images: np.ndarray
    scores: np.ndarray
    kinds: tuple
    opacity: np.ndarray
    cells: tuple
    masks: np.ndarray
    present: np.ndarray
    content_types: tuple
    strength: np.ndarray

    def __len__(self) -> int:
        return len(self.images)


def test_cross_fitted_control_equals_fitting_each_fold_on_its_images():
    rng = np.random.default_rng(5)
    n = 13
    kinds = ("logo", "text", "clean") * 4 + ("pattern",)
    data = _Data(
        images=rng.integers(0, 256, size=(n, 16, 16, 3), dtype=np.uint8),
        scores=rng.uniform(0, 5, n),
        kinds=kinds,
        opacity=np.zeros(n),
        cells=("Center",) * n,
        masks=np.zeros((n, 16, 16), bool),
        present=np.array([k != "clean" for k in kinds]),
        content_types=("logo",) * n,
        strength=np.full(n, np.nan),
    )
    probs = np.full((n, 5), 0.2)
    preds = WatermarkPredictions(
        scores=rng.uniform(0, 5, n),
        expected_scores=probs @ [5, 4, 3, 2, 1],
        levels=("invisible",) * n,
        level_probabilities=probs,
        content_types=("logo",) * n,
        content_probabilities=np.full((n, 4), 0.25),
        boxes=np.zeros((n, 4), int),
        cells=("Center",) * n,
        orientations=("horizontal",) * n,
        present=np.ones(n, bool),
        located=np.ones(n, bool),
        image_sizes=((16, 16),) * n,
        heatmaps=np.zeros((n, 2, 2), np.float16),
    )
    result = evaluate_predictions(preds, data, random_state=3)
    idx = np.nonzero([k != "clean" for k in kinds])[0]  # the visible marks
    folds = np.random.default_rng(3).permutation(len(idx)) % 5
    glob = np.empty(len(idx))
    for f in range(5):
        fit_on = idx[folds != f]
        base = GlobalStatisticsBaseline().fit(data.images[fit_on], data.scores[fit_on])
        glob[folds == f] = base.predict(data.images[idx[folds == f]])
    expected = visibility_numbers(glob, data.scores[idx])
    assert result.controls["global image statistics"] == expected

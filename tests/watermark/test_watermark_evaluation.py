"""The check-3 evaluation: its numbers against brute force on predictions whose answers are
known (the truth itself, the truth shuffled, constant answers)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from trustlab.errors import InputError
from trustlab.watermark.evaluation import (
    GlobalStatisticsBaseline,
    evaluate_predictions,
    visibility_numbers,
)
from trustlab.watermark.nr import WatermarkPredictions, block_mask
from trustlab.watermark.synth import synthesize
from trustlab.watermark.vocabulary import LEVELS, level_index, level_of_score


@pytest.fixture(scope="module")
def data():
    return synthesize(
        36, random_state=21, kinds=("logo", "text", "pattern", "dwtDctSvd"), clean_fraction=0.2
    )


def _predictions(ds, scores, *, heat=None, cells=None, types=None):
    n = len(ds)
    side = 256 // 8
    if heat is None:
        heat = block_mask(ds.masks[:, None], side).numpy()
    probs = np.zeros((n, 5))
    probs[np.arange(n), [level_index(level_of_score(s)) for s in scores]] = 1.0
    return WatermarkPredictions(
        scores=np.asarray(scores, float),
        expected_scores=probs @ [5, 4, 3, 2, 1],
        levels=tuple(level_of_score(s) for s in scores),
        level_probabilities=probs,
        content_types=tuple(types if types is not None else ds.content_types),
        content_probabilities=np.full((n, 4), 0.25),
        boxes=np.zeros((n, 4), int),
        cells=tuple(cells if cells is not None else ds.cells),
        orientations=("horizontal",) * n,
        present=np.ones(n, bool),
        located=np.ones(n, bool),
        image_sizes=((256, 256),) * n,
        heatmaps=heat.astype(np.float16),
    )


def test_the_truth_scores_perfectly(data):
    result = evaluate_predictions(_predictions(data, data.scores), data)
    assert result.visibility["srcc"] == pytest.approx(1.0)
    assert result.visibility["plcc"] == pytest.approx(1.0)
    assert result.visibility["exact_level_accuracy"] == 1.0
    assert result.location["cell_accuracy"] == 1.0
    assert result.location["heatmap_iou"] == 1.0
    assert result.content_type_accuracy == 1.0
    visible = np.isin(data.kinds, ("logo", "text", "pattern"))
    strong = visible & (np.nan_to_num(data.opacity) >= 0.1)
    assert result.location["n"] == strong.sum() and result.visibility["n"] == visible.sum()


def test_numbers_equal_brute_force_on_other_answers(data):
    rng = np.random.default_rng(0)
    scores = np.clip(data.scores + rng.normal(0, 1.0, len(data)), 0, 5)
    cells = list(data.cells)
    cells[0], cells[1] = "Top-left", "Bottom-right"
    heat = rng.random((len(data), 32, 32))
    result = evaluate_predictions(_predictions(data, scores, heat=heat, cells=cells), data)
    visible = np.isin(data.kinds, ("logo", "text", "pattern"))
    strong = visible & (np.nan_to_num(data.opacity) >= 0.1)
    # brute force, image by image
    exact = [LEVELS.index(level_of_score(p)) == LEVELS.index(level_of_score(t))
             for p, t in zip(scores[visible], data.scores[visible], strict=True)]  # fmt: skip
    assert result.visibility["exact_level_accuracy"] == pytest.approx(np.mean(exact))
    hits = [cells[i] == data.cells[i] for i in np.nonzero(strong)[0]]
    assert result.location["cell_accuracy"] == pytest.approx(np.mean(hits))
    true = [data.cells[i] for i in np.nonzero(strong)[0]]
    share = max(true.count(c) for c in true) / len(true)
    assert result.location["commonest_cell_share"] == pytest.approx(share)
    ious = []
    for i in np.nonzero(strong)[0]:
        region = np.zeros((32, 32), bool)
        for r in range(32):
            for c in range(32):
                region[r, c] = data.masks[i, 8 * r : 8 * r + 8, 8 * c : 8 * c + 8].any()
        h = heat[i].astype(np.float16).astype(np.float32) >= 0.5
        ious.append((h & region).sum() / (h | region).sum())
    assert result.location["heatmap_iou"] == pytest.approx(np.mean(ious))
    # invisible detection: 5 - score of the watermarked images against the clean ones
    clean = np.asarray(data.kinds) == "clean"
    for key, auc in result.invisible_auroc.items():
        strength = float(key.rsplit(" ", 1)[1])
        sel = (np.asarray(data.kinds) == "dwtDctSvd") & (data.strength == strength)
        y = np.r_[np.ones(sel.sum()), np.zeros(clean.sum())]
        assert auc == pytest.approx(roc_auc_score(y, np.r_[5 - scores[sel], 5 - scores[clean]]))
    assert result.invisible_auroc  # the set has dwtDctSvd marks and clean images


def test_constant_answers_and_controls(data):
    result = evaluate_predictions(_predictions(data, np.full(len(data), 5.0)), data)
    assert np.isnan(result.visibility["srcc"])  # undefined, not a number to be proud of
    constant = result.controls["constant invisible"]
    assert constant["exact_level_accuracy"] == result.visibility["exact_level_accuracy"]
    assert set(result.controls) == {
        "constant invisible",
        "random from the level prior",
        "global image statistics",
    }
    assert "control" in result.summary() and result.plot() is not None


def test_global_statistics_features_by_brute_force():
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(2, 9, 7, 3), dtype=np.uint8)
    f = GlobalStatisticsBaseline.features(images)
    x = images[1].astype(float) / 255
    assert f[1, :3] == pytest.approx(x.reshape(-1, 3).mean(0))
    assert f[1, 3:6] == pytest.approx(x.reshape(-1, 3).std(0))
    sat = ((x < 0.02) | (x > 0.98)).mean()
    assert f[1, 7] == pytest.approx(sat)
    model = GlobalStatisticsBaseline().fit(images, [1.0, 4.0])
    assert model.predict(images).shape == (2,)


def test_global_statistics_features_do_not_depend_on_the_chunks():
    """Computed 32 images at a time: each image's row equals that image computed alone."""
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, size=(70, 12, 10, 3), dtype=np.uint8)
    f = GlobalStatisticsBaseline.features(images)
    assert f.shape == (70, 9)
    for i in (0, 31, 32, 69):
        np.testing.assert_array_equal(f[i], GlobalStatisticsBaseline.features(images[i : i + 1])[0])


def test_visibility_numbers_and_bad_input(data):
    v = visibility_numbers([0.5, 1.5, 2.5, 3.5, 4.5], [4.5, 3.5, 2.5, 1.5, 0.5])
    assert v["srcc"] == pytest.approx(-1.0) and v["within_one_level_accuracy"] == 0.2
    with pytest.raises(InputError, match="predicted"):
        visibility_numbers([1.0], [2.0])
    preds = _predictions(data, data.scores)
    with pytest.raises(InputError, match="min_opacity"):
        evaluate_predictions(preds, data, min_opacity=0.5)
    with pytest.raises(InputError, match="predictions"):
        evaluate_predictions(_predictions(data.subset(np.arange(5)), data.scores[:5]), data)

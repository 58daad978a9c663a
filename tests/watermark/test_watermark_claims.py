"""Check 3 of spec 05: the shipped no-reference predictor on held-out generated images.

The predictor was trained on seed 101 (its settings were chosen on seeds 11 and 12, its
read-out, flip averaging and the mean of the two heads, on seeds 11-16); these tests use seeds it
never saw (103 for the visible marks, 104 for the invisible ones), and each claim is checked
against the control that would tie if the predictor had learnt nothing beyond global image
statistics. Thresholds are the issue's, fixed before the first run of these tests. On seed 103
every target is met, some narrowly (the 3x3 cell: 0.807, one image above 0.8); on other seeds
SRCC and exact level accuracy fall under their targets (docs/watermark.md has eleven seeds).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trustlab.watermark.checkpoints import checkpoint_data, load_checkpoint
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.synth import synthesize

torch.set_num_threads(1)
#: the predictor trained on 12,000 images (scripts/watermark_more_data.py; docs/watermark.md)
MORE_DATA_MODEL = Path(__file__).resolve().parents[2] / "docs/results/watermark_more_data"


def _visible_job(n: int, seed: int, n_train: int):
    torch.set_num_threads(1)
    model = load_checkpoint()
    data = synthesize(n, random_state=seed, kinds=("logo", "text", "pattern"))
    train = checkpoint_data("train", n=n_train)  # the control's training images (the model's seed)
    from trustlab.watermark.nr import WatermarkPredictor

    more = WatermarkPredictor.load(MORE_DATA_MODEL)
    return {
        "default": evaluate_predictions(model.predict(data.images), data, train=train),
        # the control of flip averaging: the same network on one view of each image
        "one view": evaluate_predictions(model.predict(data.images, flip_average=False), data),
        # the same settings and training length on four times the images (not shipped)
        "more data": evaluate_predictions(more.predict(data.images), data),
    }


def _invisible_job(n: int, seed: int):
    torch.set_num_threads(1)
    model = load_checkpoint()
    data = synthesize(n, random_state=seed, kinds=("logo", "dwtDctSvd"), clean_fraction=0.3)
    return evaluate_predictions(model.predict(data.images), data)


BACKGROUND_JOBS = {
    "wmark-claims-visible": (_visible_job, {"n": 300, "seed": 103, "n_train": 300}),
    "wmark-claims-invisible": (_invisible_job, {"n": 60, "seed": 104}),
}


@pytest.fixture(scope="module")
def visible_both(background):
    return background.result("wmark-claims-visible", BACKGROUND_JOBS["wmark-claims-visible"])


@pytest.fixture(scope="module")
def visible(visible_both):
    return visible_both["default"]


def test_flip_averaging_beats_one_view(visible_both):
    """Averaging each image with its mirror (the default) against the same network on one view.
    Chosen on seeds 11 and 12; over seeds 11-16 and 102-107 SRCC rose by 0.008 to 0.043 and the
    heatmap IoU by 0.027 to 0.045, so the test asks for a rise of 0.005 and 0.01."""
    both, one = visible_both["default"], visible_both["one view"]
    assert both.visibility["srcc"] >= one.visibility["srcc"] + 0.005, (both, one)
    assert both.location["heatmap_iou"] >= one.location["heatmap_iou"] + 0.01, (both, one)


def test_four_times_the_training_images_rank_better(visible_both):
    """The Table 4-like row beyond the shipped data: the same settings and number of steps on
    12,000 images against the shipped model's 3,000 (docs/watermark.md). Both directions held on
    every other set it was read on (seeds 105-107 of 300 images, 501 and 601 of 3,000), so no
    margin was chosen on this one. The 3x3 cell (better on five of those six sets) and exact level
    accuracy (mixed) are not claimed."""
    shipped, more = visible_both["default"], visible_both["more data"]
    assert more.visibility["srcc"] > shipped.visibility["srcc"]
    assert more.visibility["within_one_level_accuracy"] > shipped.visibility[
        "within_one_level_accuracy"]  # fmt: skip


def test_visibility_score_beats_the_global_statistics_control(visible):
    v, control = visible.visibility, visible.controls["global image statistics"]
    assert v["srcc"] >= control["srcc"] + 0.3, (v, control)
    assert v["plcc"] >= control["plcc"] + 0.3, (v, control)


def test_visibility_score_srcc_and_plcc_reach_085(visible):
    v = visible.visibility
    assert v["srcc"] >= 0.85 and v["plcc"] >= 0.85, v


def test_visibility_levels_beat_every_control(visible):
    v = visible.visibility
    for name, control in visible.controls.items():
        assert v["exact_level_accuracy"] >= control["exact_level_accuracy"] + 0.1, name
        assert v["within_one_level_accuracy"] > control["within_one_level_accuracy"], name


def test_exact_level_accuracy_reaches_06(visible):
    assert visible.visibility["exact_level_accuracy"] >= 0.6, visible.visibility


def test_within_one_level_accuracy_reaches_09(visible):
    assert visible.visibility["within_one_level_accuracy"] >= 0.9, visible.visibility


def test_location_beats_the_commonest_cell(visible):
    """The control for the 3x3 cell: always answering the most frequent cell of the test set."""
    loc = visible.location
    assert loc["n"] >= 100
    assert loc["cell_accuracy"] >= loc["commonest_cell_share"] + 0.1, loc


def test_cell_accuracy_of_clearly_visible_marks_reaches_08(visible):
    assert visible.location["cell_accuracy"] >= 0.8, visible.location


def test_heatmap_iou_of_clearly_visible_marks_reaches_05(visible):
    assert visible.location["heatmap_iou"] >= 0.5, visible.location


def test_invisible_marks_are_reported_not_gated(background):
    """Invisible marks: detection AUROC per method and strength is reported (no threshold: weak
    invisible marks are meant to be hard to see); the numbers exist and are probabilities."""
    job = BACKGROUND_JOBS["wmark-claims-invisible"]
    result = background.result("wmark-claims-invisible", job)
    assert result.invisible_auroc
    assert all(0.0 <= v <= 1.0 for v in result.invisible_auroc.values())

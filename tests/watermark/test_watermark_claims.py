"""Check 3 of spec 05: the shipped no-reference predictor on held-out generated images.

The predictor was trained on seeds 1101-1116 (its settings were chosen on seeds 11 and 12 with the
previous 3,000-image model, its read-out, flip averaging, the mean of the two heads and the level
head's most probable level, on seeds 11-16); these tests use seeds it never saw (103 for the
visible marks, 104 for the invisible ones), and each claim is checked against the control that
would tie if the predictor had learnt nothing beyond global image statistics. Thresholds are the
issue's, fixed before the first run of these tests. On seed 103 every target is met; on six of
the ten other seeds of 300 images exact level accuracy falls under its target, which it meets
narrowly on two sets of 3,000 images (0.617 and 0.614; docs/watermark.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trustlab.watermark.checkpoints import checkpoint_data, load_checkpoint
from trustlab.watermark.evaluation import evaluate_predictions
from trustlab.watermark.synth import synthesize

torch.set_num_threads(1)
#: the previous shipped predictor, trained on 3,000 images (docs/watermark.md, Table 4-like)
SMALL_MODEL = Path(__file__).resolve().parents[2] / "docs/results/watermark_3000"


def _visible_job(n: int, seed: int, n_train: int):
    torch.set_num_threads(1)
    model = load_checkpoint()
    data = synthesize(n, random_state=seed, kinds=("logo", "text", "pattern"))
    train = checkpoint_data("train", n=n_train)  # the control's training images
    from trustlab.watermark.nr import WatermarkPredictor

    small = WatermarkPredictor.load(SMALL_MODEL)
    return {
        "default": evaluate_predictions(model.predict(data.images), data, train=train),
        # the control of flip averaging: the same network on one view of each image
        "one view": evaluate_predictions(model.predict(data.images, flip_average=False), data),
        # the control of the level read-out: the level of the mean score
        "score level": evaluate_predictions(
            model.set_params(level_readout="score").predict(data.images), data
        ),
        # the same settings and training length on a quarter of the images
        "small": evaluate_predictions(small.predict(data.images), data),
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
    Over the ten other seeds of docs/results/watermark_seeds.json (102, 105-107, 11-16) SRCC rose
    on every one (by 0.002 to 0.016) and the heatmap IoU by 0.029 to 0.044, so the test asks for
    a rise of SRCC and of 0.02 in IoU."""
    both, one = visible_both["default"], visible_both["one view"]
    assert both.visibility["srcc"] > one.visibility["srcc"], (both, one)
    assert both.location["heatmap_iou"] >= one.location["heatmap_iou"] + 0.02, (both, one)


def test_four_times_the_training_images_rank_better(visible_both):
    """The Table 4-like row beyond the previous model's data: the same settings and number of
    steps on 12,000 images (shipped) against 3,000 (docs/watermark.md). SRCC was higher on every
    other set read (the ten other seeds of 300 images, by 0.003 to 0.065, and seeds 501 and 601
    of 3,000), so no margin is asked. Within-one accuracy (lower on seed 105), the 3x3 cell and
    exact level accuracy (each lower on several seeds) are not claimed."""
    shipped, small = visible_both["default"], visible_both["small"]
    assert shipped.visibility["srcc"] > small.visibility["srcc"], (shipped, small)


def test_the_level_heads_most_probable_level_beats_the_level_of_the_score(visible_both):
    """The shipped read-out of the level against the previous one on the same network. Chosen on
    seeds 11-16 (higher on four, tied on two: 0.601 against 0.576 on average); higher on every
    held-out set read since (seeds 102 and 105-107 by 0.017 to 0.040, seeds 501 and 601 of 3,000
    images by 0.038 and 0.030)."""
    head, score = visible_both["default"], visible_both["score level"]
    assert head.visibility["exact_level_accuracy"] > score.visibility["exact_level_accuracy"]


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

"""Checks 4-7 of spec 12 on the shipped region-sparse models, on BAM-lite images of a seed used
neither in training (seed 1) nor for the held-out accuracy that settings were looked at (seed 2).

Margins: the localisation control (a random superpixel mask of the same area per image) scores the
object-area fraction in expectation; over 120 images its mean stays within 0.03 of it (the spread
over five control seeds here was under 0.01). The P2P claims are far from their thresholds
(precision 0.89-0.96 against 0.6; deletion agreement 0.28 against 0.82 for random deletion).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")
pytest.importorskip("safetensors")

from trustlab.explain.regions import (  # noqa: E402
    checkpoint_data,
    evaluate_regions,
    load_checkpoint,
)

SEED = 3
N_IMAGES = 120


@pytest.fixture(scope="module")
def evaluation():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        data = checkpoint_data("test", random_state=SEED).subset(np.arange(N_IMAGES))
        names = ("p2p_dynamic", "p2p_fixed", "blackbox", "blackbox_pixel")
        models = {name: load_checkpoint(name) for name in names}
        labels = np.asarray(data.class_names)[data.labels]
        ev = evaluate_regions(
            models, data.images, labels, data.masks, deltas=(0.8, 0.99), random_state=0,
            deletion=(0.2,), insertion=(0.8,),
        )  # fmt: skip
    finally:
        torch.set_num_threads(old)
    return ev, data


def _row(rows, model, **where):
    for r in rows:
        if r["model"] == model and all(r[k] == v for k, v in where.items()):
            return r
    raise KeyError(model)


def test_check4_fixed_tau_model_keeps_at_most_tau_plus_005(evaluation):
    ev, _ = evaluation
    r = ev.explanations["p2p_fixed"]
    # p_bar = size-weighted mean of sigmoid(mu) = the mean of the soft map over the pixels
    p_bar = r.soft_map.reshape(len(r), -1).mean(1)
    assert p_bar.mean() <= 0.2 + 0.05
    assert r.kept_fraction.mean() <= 0.2 + 0.05


def test_check4_dynamic_tau_rises_with_delta(evaluation):
    ev, _ = evaluation
    low = _row(ev.delta_ablation, "p2p_dynamic", delta=0.8)
    high = _row(ev.delta_ablation, "p2p_dynamic", delta=0.99)
    assert high["mean_tau"] > low["mean_tau"]


@pytest.mark.xfail(
    strict=True,
    reason="negative result (docs/explain-regions.md): on BAM-lite shapes the dynamic model's "
    "masks do not grow with tau (the object, ~4 % of the image, suffices at every level >= 0.05; "
    "the KL term only caps the area), its selector's tau slope is slightly negative, so the mean "
    "kept area does not increase with delta",
)
def test_check4_dynamic_kept_area_increases_with_delta(evaluation):
    ev, _ = evaluation
    low = _row(ev.delta_ablation, "p2p_dynamic", delta=0.8)
    high = _row(ev.delta_ablation, "p2p_dynamic", delta=0.99)
    assert high["mean_kept"] > low["mean_kept"] + 0.005


def test_check5_p2p_masks_lie_on_the_object_and_random_masks_do_not(evaluation):
    ev, _ = evaluation
    frac = ev.object_fraction
    for name in ("p2p_dynamic", "p2p_fixed"):
        row = _row(ev.localisation, name)
        assert row["precision"] >= max(0.6, frac + 0.3), row
        assert abs(row["random_precision"] - frac) <= 0.03, row
        assert row["empty_masks"] <= 0.05


def test_check6_deleting_the_top_regions_hurts_more_than_random(evaluation):
    ev, _ = evaluation
    for name in ("p2p_dynamic", "p2p_fixed"):
        row = _row(ev.fidelity, name, kind="deletion")
        assert row["fractions"] == [0.2]
        assert row["importance"][0] <= row["random"][0] - 0.2, row


def test_check7_blackbox_pixel_keeps_accuracy_but_localises_at_chance(evaluation):
    ev, _ = evaluation
    bb = _row(ev.accuracy, "blackbox")
    px = _row(ev.accuracy, "blackbox_pixel")
    assert px["mean_kept"] == pytest.approx(0.2, abs=0.01)
    assert px["accuracy"] >= 0.8 and px["accuracy"] >= bb["accuracy"] - 0.1
    loc = _row(ev.localisation, "blackbox_pixel")
    assert abs(loc["precision"] - ev.object_fraction) <= 0.03
    for name in ("p2p_dynamic", "p2p_fixed"):  # P2P: high accuracy from a few regions
        assert _row(ev.accuracy, name)["accuracy"] >= 0.8


def test_evaluation_reports_every_table(evaluation):
    ev, _ = evaluation
    d = ev.to_dict()
    assert {"accuracy", "localisation", "fidelity", "delta_ablation"} <= set(d)
    assert "p2p_fixed" in ev.summary()

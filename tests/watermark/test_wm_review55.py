"""Review 55 of the watermark area: an empty image array, the invisible-mark functions' inputs,
two of the page's numbers against docs/results, and PLCC on scores of any magnitude."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from trustlab.errors import InputError
from trustlab.watermark import WatermarkPredictor, decode_invisible, embed_invisible, srcc_plcc

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "watermark.md"
BITS = np.tile([True, False, False, True], 8)


def test_an_empty_image_array_is_an_input_error():
    """An (0, H, W, 3) array reached np.stack and raised numpy's 'need at least one array to
    concatenate'; an empty list already gave the InputError."""
    with pytest.raises(
        InputError, match=r"^images: expected an \(n, H, W, 3\) uint8 array \(n >= 1\)"
    ):
        WatermarkPredictor().fit(
            np.zeros((0, 16, 16, 3), np.uint8),
            scores=[],
            masks=np.zeros((0, 16, 16), bool),
            content_types=[],
        )


@pytest.mark.parametrize("strength", [0, -5, float("nan")])
def test_a_strength_that_embeds_nothing_is_refused(strength):
    """dwtDctSvd at strength 0 or below returned an image whose payload decoded to 11 of 32 bits,
    without a word."""
    image = np.full((256, 256, 3), 128, np.uint8)
    with pytest.raises(InputError, match=r"^strength: expected a number in \(0, inf\)"):
        embed_invisible("dwtDctSvd", image, strength, BITS)
    with pytest.raises(InputError, match=r"^strength:"):
        decode_invisible("blind", image, strength)


def test_images_the_libraries_cannot_carry_are_input_errors():
    """invisible-watermark raised RuntimeError under 65,536 pixels, blind-watermark an
    AssertionError (in Chinese) without room for the bits, OpenCV its own error on a float
    image, and an unknown kind was a ValueError."""
    small = np.zeros((255, 256, 3), np.uint8)
    with pytest.raises(InputError, match=r"^image: expected at least 256 x 256 = 65,536 pixels"):
        embed_invisible("dwtDct", small, 36, BITS)
    with pytest.raises(InputError, match=r"^image: expected at least 256 x 256"):
        decode_invisible("dwtDctSvd", small, 36)
    # blind-watermark needs more 4 x 4 blocks of the half-size image than bits: 8 x 4 = 32 is not
    with pytest.raises(InputError, match=r"^image: expected room for 32 bits"):
        embed_invisible("blind", np.zeros((63, 31, 3), np.uint8), 36, BITS)
    rng = np.random.default_rng(5)
    fits = rng.integers(0, 256, (63, 39, 3), dtype=np.uint8)  # 8 x 5 = 40 blocks
    marked = embed_invisible("blind", fits, 36, BITS)
    assert np.array_equal(decode_invisible("blind", marked, 36), BITS)
    with pytest.raises(InputError, match=r"^image: expected an \(H, W, 3\) uint8 RGB image"):
        embed_invisible("dwtDctSvd", np.zeros((256, 256, 3)), 36, BITS)
    with pytest.raises(InputError, match=r"^kind: expected 'dwtDctSvd', 'dwtDct', 'rivaGan'"):
        decode_invisible("dwtdctsvd", np.zeros((256, 256, 3), np.uint8), 36)
    with pytest.raises(InputError, match=r"^bits: expected a 1-D array of 0/1 values"):
        embed_invisible("blind", fits, 36, [0, 2])
    with pytest.raises(InputError, match=r"^n_bits: expected exactly 32 bits for rivaGan"):
        decode_invisible("rivaGan", np.zeros((256, 256, 3), np.uint8), 0, n_bits=16)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_large_sets_intervals_are_the_recorded_accuracies():
    """The page gave seed 601's 95 % interval as 0.597-0.631; 0.61433 +- 0.01742 is 0.597-0.632."""
    held = json.loads((ROOT / "docs/results/watermark_heldout.json").read_text())
    shown = []
    for seed in ("seed_501", "seed_601"):
        models = held[seed]["models"]
        (shipped,) = [m for name, m in models.items() if name.startswith("shipped")]
        acc = shipped["evaluation"]["visibility"]["exact_level_accuracy"]
        half = 1.96 * math.sqrt(acc * (1 - acc) / shipped["evaluation"]["visibility"]["n"])
        shown.append(f"{acc - half:.3f}-{acc + half:.3f}")
    assert f"intervals ({shown[0]} and {shown[1]}) reach down" in _one_line(PAGE.read_text())


def test_the_object_iou_after_watermark_training_is_the_recorded_one():
    """The page said 0.02-0.07 for the pretrained runs' object IoU after the watermark training;
    the records hold 0.0217 and 0.0648."""
    rows = json.loads((ROOT / "docs/results/watermark_pretrain_ablation.json").read_text())["rows"]

    def span(arm: str) -> str:
        ious = [r["object_iou_held_out"] for r in rows.values() if r["arm"] == arm]
        return f"{min(ious):.2f}-{max(ious):.2f}"

    sentence = f"no longer does ({span('position')}; the controls {span('none')})."
    assert sentence in _one_line(PAGE.read_text())


@pytest.mark.parametrize("scale", [1e200, 1e-300])
def test_plcc_on_scores_of_any_magnitude_is_scipys(scale):
    """The norms overflowed (PLCC 0.0 for scores near 1e200) or underflowed (NaN near 1e-300)."""
    a = np.array([1.0, 2.0, 3.0, 5.0]) * scale
    b = np.array([1.0, 2.0, 4.0, 3.0])
    srcc, plcc = srcc_plcc(a, b)
    assert plcc == pytest.approx(stats.pearsonr(a / scale, b).statistic, abs=1e-12)
    assert srcc == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)

"""heatmap_overlay blends a photo in blocks of rows and keeps a float32 heatmap in its dtype (the
whole-image float64 blend of a 95-megapixel photo took several GB); the pixels are those of the
one-shot float64 blend, across block edges and for every heatmap dtype."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.audit.sections.watermark import heatmap_overlay


def _one_shot(image, heat, alpha):
    a = alpha * np.clip(np.asarray(heat, np.float64), 0.0, 1.0)[..., None]
    return np.rint((1.0 - a) * image + a * np.array([255.0, 0.0, 0.0])).astype(np.uint8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.uint8, bool])
@pytest.mark.parametrize("height", [255, 256, 257, 700])
def test_blocks_of_rows_give_the_one_shot_blend(dtype, height):
    rng = np.random.default_rng(height)
    image = rng.integers(0, 256, (height, 5, 3), dtype=np.uint8)
    heat = (rng.random((height, 5)) * (1 if dtype in (np.uint8, bool) else 1.3)).astype(dtype)
    out = heatmap_overlay(image, heat, (1, 250, 4, 260), alpha=0.7)
    expected = _one_shot(image, heat, 0.7)
    box = np.zeros(out.shape[:2], bool)
    box[250 : min(260, height), 1:4] = True
    assert np.array_equal(out[~box], expected[~box])


def test_a_heatmap_given_as_nested_lists_still_reads():
    image = np.zeros((2, 2, 3), np.uint8)
    assert heatmap_overlay(image, [[1.0, 0.0], [0.0, 0.5]], alpha=1.0)[0, 0].tolist() == [255, 0, 0]


def test_peak_memory_is_bounded_by_a_block_not_the_image():
    import tracemalloc

    image = np.zeros((4000, 1000, 3), np.uint8)  # 12 MB; its float64 blend is 96 MB a copy
    heat = np.full((4000, 1000), 0.5, np.float32)
    tracemalloc.start()
    try:
        heatmap_overlay(image, heat)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the output (12 MB) and a few float64 temporaries of 256 rows (6 MB each)
    assert peak < 40e6, peak

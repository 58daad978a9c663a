"""Review 5: the orientation of a prediction's heatmap region was read on the network's square
grid, not in the image's frame: a 20 x 4000 image whose region spans 3,600 pixels across and 20
down was called "vertical", a 3000 x 9 one spanning 2,000 pixels down "diagonal". The region's
axis is now read with each grid cell's size in the image's pixels (square images: unchanged)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark.vocabulary import orientation_of_mask

torch = pytest.importorskip("torch")


def test_cell_size_reads_the_axis_in_the_image_frame():
    grid = np.eye(32, dtype=bool)  # diagonal on the grid
    assert orientation_of_mask(grid) == "diagonal"
    assert orientation_of_mask(grid, cell_size=(1.0, 1.0)) == "diagonal"
    assert orientation_of_mask(grid, cell_size=(1.0, 10.0)) == "horizontal"  # 5.7 degrees
    assert orientation_of_mask(grid, cell_size=(10.0, 1.0)) == "vertical"
    # square cells of any size: the same bin as the grid's
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = rng.random((16, 16)) < 0.2
        assert orientation_of_mask(m, cell_size=(7.5, 7.5)) == orientation_of_mask(m)


@pytest.mark.parametrize("bad", [(0, 1), (1, -2), (float("nan"), 1), "x", (1,)])
def test_cell_size_refused(bad):
    with pytest.raises(InputError, match="cell_size"):
        orientation_of_mask(np.eye(4, dtype=bool), cell_size=bad)


def _spread(pred, shape):
    """Standard deviations (x, y) in image pixels of the heatmap region predict boxes."""
    hm = pred.heatmaps[0].astype(float)
    region = hm >= pred.threshold
    if not region.any():
        region = hm >= 0.5 * hm.max()
    rows, cols = np.nonzero(region)
    return cols.std() * shape[1] / hm.shape[1], rows.std() * shape[0] / hm.shape[0]


@pytest.mark.parametrize("shape", [(20, 4000), (3000, 9)])
def test_a_long_thin_region_of_a_long_thin_image_is_not_called_across(shape):
    from trustlab.watermark.checkpoints import load_checkpoint

    img = np.random.default_rng(0).integers(0, 256, (*shape, 3), dtype=np.uint8)
    pred = load_checkpoint().predict([img])
    sx, sy = _spread(pred, shape)
    assert max(sx, sy) > 10 * min(sx, sy) + 1  # the region runs along the image
    assert pred.orientations[0] == ("horizontal" if sx > sy else "vertical")

"""A damaged superpixel cache file is computed again and rewritten, not an error (it used to end in
a ValueError about pickled data or a KeyError from numpy)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("skimage")

from trustlab.explain.regions.data import bam_lite  # noqa: E402
from trustlab.explain.regions.segments import superpixels  # noqa: E402


@pytest.mark.parametrize("damage", ["garbage", "other_npz", "truncated"])
def test_a_damaged_cache_file_is_recomputed_and_rewritten(tmp_path, damage):
    images = bam_lite(2, size=32, random_state=0).images
    fresh = superpixels(images, n_segments=16)
    assert np.array_equal(superpixels(images, n_segments=16, cache_dir=tmp_path), fresh)
    (path,) = tmp_path.glob("superpixels-*.npz")
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not an npz file")
    elif damage == "other_npz":
        with open(path, "wb") as fh:
            np.savez(fh, something_else=np.zeros(3))
    else:
        path.write_bytes(good[: len(good) // 2])
    assert np.array_equal(superpixels(images, n_segments=16, cache_dir=tmp_path), fresh)
    with np.load(path, allow_pickle=False) as stored:  # rewritten: readable again
        assert np.array_equal(stored["segments"], fresh)

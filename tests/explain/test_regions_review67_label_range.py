"""Review 67 of region labels far past a map's size.

Measured on the old files: a (1, 2, 2) segment map holding the label 10**12 stopped
segment_sizes and random_area_masks on a raw "MemoryError: Unable to allocate 7.28 TiB",
mask_from_segments and kept_fraction on "Unable to allocate 931. GiB" (one count or column per
label up to the largest). Now every reader of segment maps (these, the fidelity curves,
check_segment_maps of labels used as given (compact ones are renumbered, review 58), group_pool
and pixel_mask) refuses labels at or past the larger of the map's pixel count and 65536 by the
argument's name; labels below it read as before."""

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.regions import (
    kept_fraction,
    mask_from_segments,
    random_area_masks,
    segment_sizes,
)
from trustlab.explain.regions.inputs import check_segment_maps
from trustlab.explain.regions.selection import group_pool

HUGE = np.array([[[0, 0], [0, 10**12]]], dtype=np.int64)
CALLS = {
    "segment_sizes": lambda seg: segment_sizes(seg),
    "mask_from_segments": lambda seg: mask_from_segments(seg, [[0]]),
    "kept_fraction": lambda seg: kept_fraction(seg, [[0]]),
    "random_area_masks": lambda seg: random_area_masks(seg, 0.5, 0),
    "check_segment_maps": lambda seg: check_segment_maps(seg, np.zeros((1, 3, 2, 2))),
    "group_pool": lambda seg: group_pool(torch.ones(1, 1, 2, 2), torch.as_tensor(seg)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_label_far_past_the_map_is_refused_by_name(call):
    with pytest.raises(InputError, match=r"^segments: expected region labels below 65536") as e:
        CALLS[call](HUGE)
    assert e.value.argument == "segments"
    assert "a label of 1000000000000" in str(e.value)


@pytest.mark.parametrize("call", ["segment_sizes", "mask_from_segments", "kept_fraction"])
def test_a_sparse_label_below_the_limit_reads_as_before(call):
    seg = np.array([[[0, 0], [0, 65535]]], dtype=np.int64)
    CALLS[call](seg)  # no error
    assert segment_sizes(seg)[0][[0, 65535]].tolist() == [3, 1]

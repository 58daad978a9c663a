"""Review 67 of group_pool's n_groups (public in trustlab.explain.regions).

Measured on the old file: group_pool(ones (1, 1, 2, 2), zeros (1, 2, 2), n_groups=10**12) stopped
on torch's raw "RuntimeError: [enforce fail at alloc_cpu.cpp:127] ... you tried to allocate
4000000000000 bytes" (the (B, K, C) sums). Now n_groups above the label limit (the larger of a
map's pixels and 65536, as for the labels themselves) is refused by name; padding up to it works
as before."""

import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.regions import group_pool

FEATURES, SEGMENTS = torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, dtype=torch.long)


@pytest.mark.parametrize("n_groups", [65537, 10**12])
def test_padding_past_the_label_limit_is_refused(n_groups):
    with pytest.raises(InputError, match=r"^n_groups: expected at most 65536") as e:
        group_pool(FEATURES, SEGMENTS, n_groups)
    assert e.value.argument == "n_groups"


def test_padding_up_to_the_limit_works_as_before():
    means, sizes = group_pool(FEATURES, SEGMENTS, 65536)
    assert means.shape == (1, 65536, 1) and sizes[0, :2].tolist() == [4, 0]
    means, sizes = group_pool(FEATURES, SEGMENTS, 3)
    assert means[0].tolist() == [[1.0], [0.0], [0.0]] and sizes[0].tolist() == [4, 0, 0]

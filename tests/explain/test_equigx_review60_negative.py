"""Diff review 60 I (a sister of 8827f6c4): ``GraphDataset.subset`` takes numpy-style negative
positions (``-1`` is the last graph) while its refusal said 'positions in [0, n)', a range that
excludes what was just accepted; it now says '[-n, n) (negative ones count from the end)'."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.explain.equigx.data import shapes_in_noise


def test_negative_positions_count_from_the_end_and_the_refusal_says_so():
    ds = shapes_in_noise(4, random_state=0)
    assert ds.subset([-1, -4])[0] is ds[3] and ds.subset([-1, -4])[1] is ds[0]
    for index in ([-5], [4]):
        with pytest.raises(
            InputError, match=r"indices: expected positions in \[-4, 4\) \(negative"
        ):
            ds.subset(index)

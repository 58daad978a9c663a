"""Review 59 (polysae): ``SafetyPrompts.subset`` of no positions, and of bad ones.

``subset([])`` (no prompt picked, e.g. no unsafe prompt left by a filter) raised numpy's
"IndexError: arrays used as indices must be of integer (or boolean) type" ([] is a float array
to numpy), and positions past the end, a mask of the wrong length or a scalar raised raw
IndexError/TypeError; now an empty subset is returned and the others are an InputError naming
``index``.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import load_safety_prompts


@pytest.fixture(scope="module")
def train():
    return load_safety_prompts("train", sources=["harmbench", "benign"])


def test_an_empty_list_picks_no_prompt(train):
    for index in ([], (), np.array([], dtype=np.int64), np.zeros(len(train), dtype=bool)):
        none = train.subset(index)
        assert len(none) == 0 and none.unsafe.shape == (0,) and none.categories == ()
        assert none.split == train.split
    assert train.subset([0, 2]).prompts == (train.prompts[0], train.prompts[2])
    assert len(train.subset(train.unsafe.astype(bool))) == int(train.unsafe.sum())


def test_bad_positions_are_named(train):
    n = len(train)
    for index in ([n], [0.5], 3, [[0, 1]], np.ones(3, dtype=bool), ["a"]):
        with pytest.raises(InputError, match=rf"index: expected positions in \[{-n}, {n - 1}\]"):
            train.subset(index)

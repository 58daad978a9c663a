"""Review 60: ``SafetyPrompts.subset`` takes negative positions (numpy's, counting from the end),
and its refusal now says so. ``subset([-1])`` gave the last prompt while a position out of range
was refused as 'expected positions in [0, n-1]', a range that excludes what was just accepted."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety import load_safety_prompts


def test_negative_positions_count_from_the_end_and_the_message_says_so():
    train = load_safety_prompts("train", sources=["harmbench", "benign"])
    n = len(train)
    assert train.subset([-1, -n]).prompts == (train.prompts[-1], train.prompts[0])
    for index in ([-n - 1], [n]):
        with pytest.raises(InputError, match=rf"positions in \[{-n}, {n - 1}\] \(negative ones"):
            train.subset(index)

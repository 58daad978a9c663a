"""synthesize keeps the rounded opacity inside opacity_range (review 65)."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


def test_rounded_opacity_stays_in_range():
    # u ~ U[0.101, 0.11] rounded to 0.01 gives 0.10 for u < 0.105 (seed 1: u < 0.105), which
    # lies outside the range; 0.11 is the only multiple of 0.01 inside it
    ds = synthesize(1, random_state=1, kinds=("logo",), opacity_range=(0.101, 0.11))
    assert ds.opacity.tolist() == [0.11]
    assert ds.scores.tolist() == [5 - 20 * 0.11]


def test_range_without_a_hundredth_is_refused():
    with pytest.raises(InputError, match="opacity_range.*multiple of 0.01"):
        synthesize(1, random_state=0, kinds=("logo",), opacity_range=(0.001, 0.004))

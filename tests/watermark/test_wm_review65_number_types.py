"""The vocabulary's numbers and WatermarkFacts refuse strings and bools (review 65)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import WatermarkFacts, cell_of_point, level_of_score, score_of_opacity


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: WatermarkFacts(present=True, score="3.5", level="faint"), "score"),
        (
            lambda: WatermarkFacts(present=True, score=3.5, level="faint", coverage="0.2"),
            "coverage",
        ),
        (lambda: level_of_score(True), "score"),
        (lambda: score_of_opacity(np.False_), "opacity"),
        (lambda: cell_of_point("1", 1, width=3, height=3), "x"),
    ],
)
def test_strings_and_bools_are_no_numbers(call, argument):
    with pytest.raises(InputError, match=rf"^{argument}: expected a number"):
        call()


def test_numpy_numbers_still_read():
    assert level_of_score(np.float32(3.5)) == "faint"
    assert (
        WatermarkFacts(present=True, score=np.int64(2), level="moderate")
        .summary()
        .endswith("score 2.00 (moderate)")
    )

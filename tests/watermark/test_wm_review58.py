"""Review 58 (watermark): bad inputs of the public helpers give one-line InputErrors naming the
argument, and no bad input is read as another value."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.mark.parametrize("value", ["36", ["x"], [True], {"a"}, [], [0.0], [float("nan")]])
def test_synthesize_refuses_strengths_that_are_not_positive_numbers(value):
    # "36" was read as its characters: blind-watermark strengths 3 and 6, silently
    with pytest.raises(InputError, match=r"^strengths\['dwtDctSvd'\]: expected positive finite"):
        synthesize(1, kinds=("dwtDctSvd",), strengths={"dwtDctSvd": value})


def test_synthesize_takes_strengths_as_an_array():
    # an array was refused with a raw TypeError ("only length-1 arrays ..."); the argument check
    # alone (generating an image costs seconds of imports and covers)
    from trustlab.watermark.synth import _check_args

    table = _check_args(
        1, 0, ("text",), 256, 0.0, (0.0, 0.25), None, {"blind": np.array([72, 150])}
    )[-1]
    assert table["blind"] == (72.0, 150.0)

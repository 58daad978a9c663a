"""Review 55 (second pass): PLCC of a constant input is NaN, as documented and as scipy's.

The mean of n equal scores need not be that score (0.1 three times has mean 0.1 + 1.4e-17), so
the centred copy was not zero and PLCC came out as a number near 0 (e.g. -1.8e-17) instead of NaN.
"""

from __future__ import annotations

import math

import pytest

from trustlab.watermark import srcc_plcc


@pytest.mark.parametrize("value", [0.1, 0.7, 123.456])
def test_a_constant_side_gives_nan(value):
    ramp = [0.0, 1.0, 2.0, 4.0, 5.0, 7.0, 9.0]
    for n in (3, 5, 7):
        for pair in (([value] * n, ramp[:n]), (ramp[:n], [value] * n)):
            srcc, plcc = srcc_plcc(*pair)
            assert math.isnan(srcc) and math.isnan(plcc), pair


def test_a_nearly_constant_side_is_still_a_correlation():
    srcc, plcc = srcc_plcc([0.1, 0.1, 0.1 + 1e-15], [0.0, 1.0, 2.0])
    assert srcc == pytest.approx(math.sqrt(3) / 2, abs=1e-12) and 0.8 < plcc < 0.9

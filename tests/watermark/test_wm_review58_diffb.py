"""Review 58 (diffB): synthesize refuses an int strength beyond float range with its InputError.

60582a3 checked each strength with math.isfinite(x), which raises a raw OverflowError ('int too
large to convert to float') for synthesize(strengths={'dwtDctSvd': 10**400}) instead of the
InputError naming strengths['dwtDctSvd'].
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.watermark import synthesize


@pytest.mark.parametrize("value", [10**400, [36, 10**400], np.inf, -(10**400)])
def test_an_int_strength_beyond_float_range_is_an_input_error(value):
    with pytest.raises(InputError, match=r"^strengths\['dwtDctSvd'\]: expected positive finite"):
        synthesize(1, kinds=("dwtDctSvd",), strengths={"dwtDctSvd": value})

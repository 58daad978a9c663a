"""Unpooled power at p1, p2 = 1, 0 exactly at the step's edge (diff review 63 B of 68a5333f).

68a5333f computed the step under np.errstate(divide="ignore"), but at the edge n where
|p1 - p2| sqrt(n) equals z_{1-alpha/2} sd_null the numerator is 0 too: 0/0 gave NaN power
and "invalid value encountered in scalar divide". The step is now computed directly: the
statistic equals the critical value, so the test (|z| > crit) does not reject: power 0.
"""

from __future__ import annotations

import math
import warnings

import pytest
from scipy import stats

from trustlab.evaluation.statistics import achieved_power


@pytest.mark.parametrize(("p1", "p2"), [(1.0, 0.0), (0.0, 1.0)])
def test_power_at_the_edge_of_the_step_is_a_number(p1, p2):
    edge = stats.norm.isf(0.025) * math.sqrt(0.5 * 0.5 * 2.0)  # crit * sd_null, ratio 1
    n = edge * edge
    if math.sqrt(n) != edge:  # the 0/0 needs sqrt(n) to give the edge back (it does here)
        pytest.skip("sqrt(edge**2) is not the edge on this platform")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert achieved_power(p1, p2, n, design="unpooled") == 0.0
        assert achieved_power(p1, p2, n * (1 + 1e-9), design="unpooled") == 1.0

"""sample_size's unpooled n at p1, p2 = 1, 0 reaches the power (diff review 63 F of 492b74f4).

There the power is a step, 0 up to the edge n = (z_{1-alpha/2} sd_null)^2 (included) and 1
past it. With alpha = 2 sf(2) the edge is 2 (z = 2, sd_null^2 = 0.5) and the formula's n comes
out as 2 plus a few ulps, which n_required's rounding to 9 digits took to 2: the edge, power 0.
"""

from __future__ import annotations

import pytest
from scipy import stats

from trustlab.evaluation.statistics import achieved_power, sample_size


@pytest.mark.parametrize(("p1", "p2"), [(1.0, 0.0), (0.0, 1.0)])
def test_unpooled_sample_size_at_the_step_reaches_the_power(p1, p2):
    alpha = 2.0 * stats.norm.sf(2.0)
    result = sample_size(p1, p2, alpha=alpha, design="unpooled")
    assert result.power_at_n_required >= 0.8
    assert (
        achieved_power(p1, p2, result.n_required, alpha, "unpooled") == result.power_at_n_required
    )


def test_unpooled_sample_size_off_the_edge_is_unchanged():
    # alpha 0.05: n = 1.92 -> 2, past the edge (power 1), as before
    result = sample_size(1.0, 0.0, design="unpooled")
    assert (result.n_required, result.power_at_n_required) == (2, 1.0)

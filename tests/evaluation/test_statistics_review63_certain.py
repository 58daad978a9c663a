"""Power at proportions 0 and 1 (review 63).

unpooled: with p1, p2 = 1, 0 the alternative's standard deviation is 0; the power is a step
(0 at n = 1, where |p1 - p2| sqrt(n) = 1 < 1.96 sqrt(0.5); 1 from n = 2) and was right, but each
call warned "divide by zero encountered in scalar divide" (twice on the command line,
``trustlab safety context power --p1 1 --p2 0 --design unpooled``). statsmodels'
``power_proportions_2indep`` gives NaN there. paired: p1, p2 = 1, 0 was refused with a message
naming ``discordant``, an argument the caller had not given (and the command line has not).
"""

from __future__ import annotations

import warnings

import pytest

from trustlab.errors import InputError
from trustlab.evaluation.statistics import achieved_power, sample_size


@pytest.mark.parametrize(("p1", "p2"), [(1.0, 0.0), (0.0, 1.0)])
def test_unpooled_power_at_zero_and_one_is_a_step_without_warnings(p1, p2):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        powers = [achieved_power(p1, p2, n, design="unpooled") for n in (1, 2, 21)]
        result = sample_size(p1, p2, design="unpooled")
    assert powers == [0.0, 1.0, 1.0]
    assert (result.n_required, result.power_at_n_required) == (2, 1.0)


def test_paired_design_at_zero_and_one_names_p2_not_discordant():
    with pytest.raises(InputError, match=r"^p2: expected not 0 with p1 = 1 in the paired") as info:
        sample_size(1.0, 0.0, design="paired")
    assert info.value.argument == "p2"
    with pytest.raises(InputError, match=r"^discordant: "):  # a discordant share given: its own
        sample_size(0.6, 0.3, design="paired", discordant=0.05)

"""normal_power / normal_sample_size check effect_size (review 59): NaN gave a power of NaN
without a word, and a text or None escaped as a bare ValueError or TypeError from float()."""

import math

import pytest

from trustlab.errors import InputError
from trustlab.evaluation import normal_power, normal_sample_size


@pytest.mark.parametrize("effect", [math.nan, math.inf, "0.5", None, True])
def test_normal_power_refuses_an_effect_size_that_is_no_finite_number(effect):
    with pytest.raises(InputError, match="^effect_size: expected a number"):
        normal_power(effect, 20)


@pytest.mark.parametrize("effect", [math.nan, "0.8", None])
def test_normal_sample_size_refuses_an_effect_size_that_is_no_number(effect):
    with pytest.raises(InputError, match="^effect_size: expected a number"):
        normal_sample_size(effect)


def test_valid_effect_sizes_keep_their_values():
    # statsmodels NormalIndPower: power(0.86304, 21) = 0.79859, solve_power(0.8) = 24.5277
    assert normal_power(0.86304, 21) == pytest.approx(0.79859, abs=5e-6)
    assert normal_power(-0.86304, 21) == normal_power(0.86304, 21)
    assert normal_sample_size(0.8) == pytest.approx(24.5277, abs=5e-5)

"""option_probability's renormalize must be True or False (review 65): renormalize="no" (or
"False") was taken as true and gave the renormalised 0.5 where the raw positive mass 0.3679 was
asked for, silently (None was read as False)."""

from __future__ import annotations

import math

import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import option_probability

TOP = {"4": -1.0, "1": -1.0}


@pytest.mark.parametrize("flag", ["no", "False", None])
def test_a_renormalize_that_is_no_bool_is_refused(flag):
    with pytest.raises(InputError, match=r"^renormalize: expected True or False"):
        option_probability(TOP, "4", "12345", renormalize=flag)


def test_both_settings_still_give_their_values():
    assert option_probability(TOP, "4", "12345", renormalize=True) == 0.5
    assert option_probability(TOP, "4", "12345", renormalize=False) == pytest.approx(math.exp(-1))

"""option_probability names the argument that is wrong (review 65): a positive option that is
neither a token nor a sequence of tokens (4.0, None) was reported as
"options: expected sequences of option tokens, got list ['A', 'B', 'C']", blaming the good
options argument."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.safety.neutrality import option_probability


@pytest.mark.parametrize("positive", [4.0, None])
def test_a_bad_positive_is_named_positive(positive):
    with pytest.raises(InputError, match=r"^positive: expected an option token or a sequence"):
        option_probability({"4": -0.1}, positive, ["1", "2", "3", "4", "5"])


def test_bad_options_are_still_named_options():
    with pytest.raises(InputError, match=r"^options: expected a sequence of option tokens, got 5"):
        option_probability({"4": -0.1}, "4", 5)
    assert option_probability({"4": -1.0, "1": -1.0}, ("4", "5"), "12345") == 0.5

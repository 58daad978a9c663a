"""score_of_level_probabilities names its argument for non-numeric input (review 65)."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark import score_of_level_probabilities


@pytest.mark.parametrize("bad", ["abc", [[1, 0, 0, 0, 0], [1]], [["a", 0, 0, 0, 1]], [None] * 5])
def test_non_numeric_probabilities_are_refused(bad):
    with pytest.raises(InputError, match="^probabilities: expected"):
        score_of_level_probabilities(bad)

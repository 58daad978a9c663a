"""Review 62 (round 2): paired_comparison flattened 2-D outcomes ([[1, 0]] read as two items)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.evaluation.statistics import paired_comparison


@pytest.mark.parametrize(
    "first, second, name",
    [
        ([[1, 0]], [[0, 1]], "first"),
        ([1, 0], np.array([[0], [1]]), "second"),
        (pd.DataFrame({"a": [1, 0]}), [0, 1], "first"),
    ],
)
def test_non_1d_outcomes_are_refused(first, second, name):
    with pytest.raises(InputError, match=rf"^{name}: expected a 1-dimensional array"):
        paired_comparison(first, second)


def test_1d_outcomes_still_work():
    for first in ([1, 0, 1], np.array([True, False, True]), pd.Series([1, 0, 1])):
        assert paired_comparison(first, [0, 1, 1]).table == ((1, 1), (1, 0))

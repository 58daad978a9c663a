"""Review 57: pandas' NA and NaT among labels or groups are missing values, said so by name.

A pandas "string" column (or an object column) holding pd.NA was refused as "values of one
comparable type" (the sort of the labels failed on NA), and a datetime column holding NaT as
"values among [..., None]"; None and NaN already read "expected no missing values".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.fairness import dcp_inputs

Y_TRUE, Y_PRED = [0, 1, 0, 1], [0, 1, 1, 1]


@pytest.mark.parametrize(
    "groups",
    [
        pd.Series(["a", "a", None, "b"], dtype="string"),
        pd.Series(["a", "a", pd.NA, "b"], dtype=object),
        ["a", "a", pd.NA, "b"],
        np.array(["2020-01-01", "2020-01-01", "NaT", "2021-01-01"], dtype="datetime64[D]"),
    ],
    ids=["string-dtype", "object-series", "list", "datetime64"],
)
def test_missing_group_is_named_missing(groups):
    with pytest.raises(InputError, match="groups: expected no missing values"):
        dcp_inputs(Y_TRUE, Y_PRED, groups)


def test_missing_label_in_string_column_is_named_missing():
    y_true = pd.Series(["x", "y", None, "y"], dtype="string")
    with pytest.raises(InputError, match="y_true: expected no missing values"):
        dcp_inputs(y_true, ["x", "y", "y", "y"], ["a", "a", "b", "b"])


def test_complete_string_and_datetime_columns_still_read():
    y_true = pd.Series(["x", "y", "x", "y"], dtype="string")
    assert dcp_inputs(y_true, ["x", "y", "y", "y"], ["a", "a", "b", "b"]).labels == ("x", "y")
    days = np.array(["2020-01-01", "2020-01-01", "2021-01-01", "2021-01-01"], dtype="datetime64[D]")
    assert len(dcp_inputs(Y_TRUE, Y_PRED, days).groups) == 2


def test_refused_sum_is_shown_with_the_digits_that_miss_1():
    """Shares rounded to 6 decimals (six groups of 0.166667) sum to 1.000002, refused beyond the
    1e-6 tolerance; the message said 'expected entries summing to 1, got sum 1' (6 digits)."""
    from trustlab.fairness import dcp_from_aggregates, dcp_from_confusion

    halves = [[0.5, 0.5]] * 6
    with pytest.raises(InputError, match=r"summing to 1, got sum 1\.000002$"):
        dcp_from_aggregates([0.166667] * 6, halves, halves)
    with pytest.raises(InputError, match=r"index \(0, 0\) summing to 0\.999996$"):
        dcp_from_confusion(np.full((2, 3, 3), 0.333332), [0.5, 0.5], [[1 / 3] * 3] * 2)


def test_names_that_are_lists_are_input_errors():
    """labels=[[0], [1]] crashed in numpy ('object too deep for desired array') and groups=[[1],
    [2]] with 'unhashable type: list'; both are now InputErrors naming the argument."""
    from trustlab.fairness import dcp_from_aggregates

    with pytest.raises(InputError, match="labels: expected a flat sequence of label values"):
        dcp_inputs(Y_TRUE, Y_PRED, ["a", "a", "b", "b"], labels=[[0], [1]])
    halves = [[0.5, 0.5]] * 2
    with pytest.raises(InputError, match="groups: expected hashable names"):
        dcp_from_aggregates([0.5, 0.5], halves, halves, groups=[[1], [2]])

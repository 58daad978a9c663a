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

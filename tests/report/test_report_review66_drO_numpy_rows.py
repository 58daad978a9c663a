"""Rows given as numpy arrays show their cells as numpy gives them (diff review 66 O of 1ffa951b).

1ffa951b turned every array it was given as rows (or as one row) into ``array.tolist()``. For a
datetime64[ns] (or timedelta64[ns]) array that is a count of nanoseconds: a row
``np.array(["2020-01-01", "NaT"], dtype="datetime64[ns]")`` drew '1,577,836,800,000,000,000' where
the page before it drew the date (as a list of the same numpy values still does), and a 0-d array
as rows or as a row stopped on Python's raw "TypeError: 'int' object is not iterable".
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.report import Table
from trustlab.report.render import format_cell

DATES = np.array(["2020-01-01", "NaT"], dtype="datetime64[ns]")
SPANS = np.array([3_600_000_000_000, 1], dtype="timedelta64[ns]")


def _shown(table: Table) -> list[list[str]]:
    return [[format_cell(cell) for cell in row] for row in table.rows]


@pytest.mark.parametrize("values", [DATES, SPANS], ids=["datetime64", "timedelta64"])
def test_a_row_of_dates_or_durations_reads_as_the_same_values_in_a_list(values):
    as_list = _shown(Table(["a", "b"], [list(values)]))
    assert _shown(Table(["a", "b"], [values])) == as_list
    assert _shown(Table(["a", "b"], np.stack([values]))) == as_list
    # the date, not 1,577,836,800,000,000,000 nanoseconds
    assert _shown(Table(["a", "b"], [DATES]))[0] == ["2020-01-01T00:00:00.000000000", "n/a"]


def test_numbers_in_arrays_read_as_before():
    rows = np.array([[1.5, 2.0], [np.nan, 1e16]])
    assert _shown(Table(["a", "b"], rows)) == [["1.5000", "2.0000"], ["n/a", "1e+16"]]
    assert _shown(Table(["a", "b"], np.empty((0, 2)))) == []


@pytest.mark.parametrize(
    ("rows", "argument"),
    [(np.array(5), "rows"), ([np.array(5)], "rows[0]")],
    ids=["rows", "row"],
)
def test_a_0d_array_is_refused_in_words(rows, argument):
    with pytest.raises(InputError) as info:
        Table(["a"], rows)
    assert info.value.argument == argument

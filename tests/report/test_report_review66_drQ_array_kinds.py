"""Diff review 66 Q of 5757cef0: Table rows given as arrays other than datetime64 read as before.

5757cef0 read every numpy array row through list(array) (numpy's scalars) to keep datetime64
cells; a timedelta64[s] row then failed the page with a raw TypeError (numpy's timedelta64 is an
integer type whose int() is a datetime.timedelta) and a masked array drew its masked cell '--'
instead of 'n/a', both drawn by 1ffa951b as '0:00:05' and 'n/a'."""

import re

import numpy as np

from trustlab.report.blocks import Table
from trustlab.report.builder import Report, Section


def _cells(rows) -> list[str]:
    report = Report("t")
    report.add(Section("s", "S", [Table(["a", "b"], rows)], {}))
    return re.findall(r"<td[^>]*>([^<]*)</td>", report.to_html())


def test_timedelta_row_reads_as_durations():
    row = np.array([5, "NaT"], dtype="timedelta64[s]")
    assert _cells([row]) == ["0:00:05", "n/a"]
    assert _cells(np.stack([row, row])) == ["0:00:05", "n/a"] * 2


def test_masked_row_reads_masked_cell_as_missing():
    row = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    assert _cells([row]) == ["1.0000", "n/a"]
    assert _cells(np.ma.vstack([row, row])) == ["1.0000", "n/a"] * 2


def test_datetime_row_keeps_numpy_cells():
    row = np.array(["2020-01-01", "NaT"], dtype="datetime64[ns]")
    assert _cells([row]) == ["2020-01-01T00:00:00.000000000", "n/a"]
    assert _cells(np.stack([row, row])) == ["2020-01-01T00:00:00.000000000", "n/a"] * 2


def test_number_rows_unchanged():
    assert _cells(np.array([[1.5, np.nan], [1e16, 2]])) == ["1.5000", "n/a", "1e+16", "2.0000"]
    assert _cells([np.array([1, -2], dtype=np.int8)]) == ["1", "-2"]

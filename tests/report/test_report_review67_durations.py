"""Table cells that are numpy timedelta64 scalars read as durations (review 67).

numpy's timedelta64 is a numbers.Integral, so format_cell took ``int(value)``: measured on
1b2aaee5, a list of ``np.timedelta64(5, 's')`` cells (also ms, m, h, D, W) stopped the page on
the raw ``TypeError: int() argument must be ... not 'datetime.timedelta'``, and a cell in
nanoseconds (or without a unit) read as a bare count ('5' for 5 ns). The same durations given as
a timedelta64[s] array row already read '0:00:05' (through ``tolist``). Now a timedelta64 cell
reads as Python's timedelta does ('0:00:05', '21 days, 0:00:00'), a negative one '-0:00:05'
(not '-1 day, 23:59:55'), and one no timedelta holds in numpy's words ('1500 nanoseconds',
'2 years'); NaT stays 'n/a'. A timedelta64 array row now keeps numpy's cells, as a datetime64 one
does, so that it reads as a list of the same values (review 66 O's test): a timedelta64[ns] row
read '3,600,000,000,000' (tolist's count of nanoseconds), now '1:00:00'.
"""

import datetime
import re

import numpy as np
import pytest

from trustlab.report.blocks import Table
from trustlab.report.builder import Report, Section
from trustlab.report.render import format_cell


def _cells(rows) -> list[str]:
    report = Report("t")
    report.add(Section("s", "S", [Table(["a", "b"], rows)], {}))
    return re.findall(r"<td[^>]*>([^<]*)</td>", report.to_html())


def test_a_list_of_timedelta_cells_in_seconds_reads_as_durations():
    row = [np.timedelta64(5, "s"), np.timedelta64(90, "s")]
    assert _cells([row]) == ["0:00:05", "0:01:30"]
    array_row = np.array([5, 90], dtype="timedelta64[s]")
    assert _cells([row]) == _cells([array_row])  # as the array row read already
    assert _cells([[np.timedelta64("NaT", "s"), np.timedelta64(2, "h")]]) == ["n/a", "2:00:00"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.timedelta64(1500, "ms"), "0:00:01.500000"),
        (np.timedelta64(1, "m"), "0:01:00"),
        (np.timedelta64(3, "W"), "21 days, 0:00:00"),
        (np.timedelta64(1, "D"), "1 day, 0:00:00"),
        (np.timedelta64(-5, "s"), "-0:00:05"),
        (np.timedelta64(5000, "ns"), "0:00:00.000005"),  # was '5,000'
        (np.timedelta64(1500, "ns"), "1500 nanoseconds"),  # was '1,500'
        (np.timedelta64(2, "Y"), "2 years"),
        (np.timedelta64(10**15, "s"), "1000000000000000 seconds"),  # beyond timedelta's days
        (np.timedelta64("NaT", "ms"), "n/a"),
        (datetime.timedelta(seconds=-5), "-0:00:05"),
        (datetime.timedelta(hours=26), "1 day, 2:00:00"),
        (datetime.timedelta.min, str(datetime.timedelta.min)),
    ],
    ids=str,
)
def test_format_cell_of_a_duration(value, text):
    assert format_cell(value) == text


def test_a_nanosecond_array_row_reads_as_its_list():
    row = np.array([3_600_000_000_000, 1], dtype="timedelta64[ns]")
    assert _cells([row]) == _cells([list(row)]) == ["1:00:00", "1 nanoseconds"]
    assert _cells(np.stack([row, row])) == ["1:00:00", "1 nanoseconds"] * 2

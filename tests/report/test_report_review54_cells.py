"""Table cells read missing values as report.json does (review 54): pandas' NA and NaT (a
nullable Parquet column) showed '<NA>' and 'NaT' in the page while report.json held null, and
-0.0 read '-0.0000'."""

import numpy as np
import pandas as pd

from trustlab.report import Report, Section, Table
from trustlab.report.render import format_cell


def test_pandas_and_numpy_missing_values_read_n_a():
    missing = [pd.NA, pd.NaT, np.datetime64("NaT"), np.timedelta64("NaT")]
    assert [format_cell(v) for v in missing] == ["n/a"] * 4
    assert format_cell(np.datetime64("2020-01-02")) == "2020-01-02"  # a date stays a date
    assert format_cell("NaT") == "NaT"  # a text is a text


def test_minus_zero_reads_zero():
    assert format_cell(-0.0) == format_cell(np.float64(-0.0)) == "0.0000"


def test_a_nullable_column_reads_n_a_in_the_page_and_null_in_the_json():
    counts = pd.array([3, pd.NA], dtype="Int64")
    report = Report("t")
    report.add(
        Section(
            "s", "S", [Table(["group", "n"], [["a", counts[0]], ["b", counts[1]]])],
            data={"n": {"a": counts[0], "b": counts[1]}},
        )
    )  # fmt: skip
    html = report.to_html()
    assert "&lt;NA&gt;" not in html and "<td>n/a</td>" in html
    assert report.to_dict()["sections"][0]["data"]["n"] == {"a": 3, "b": None}

"""A separator ending every data row (``1,x,`` under ``a,b``) is no extra column (review 65).

pandas took the first column for the row index then and shifted every value one column left:
the label column held the predictions and the group column was all missing.
"""

import pytest

from trustlab.data.tables import read_table
from trustlab.errors import InputError


def test_a_separator_ending_each_row_keeps_the_columns_in_place(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y,pred,g\n1,0,a,\n0,1,b,\n1,1,NA,\n")
    for exact in ((), ("y", "pred", "g")):
        frame = read_table(path, exact_columns=exact)
        assert list(frame.columns) == ["y", "pred", "g"]
        assert frame["y"].tolist() == [1, 0, 1]
        assert frame["pred"].tolist() == [0, 1, 1]
        assert frame["g"].tolist()[:2] == ["a", "b"]
    assert read_table(path, exact_columns=("g",))["g"].tolist() == ["a", "b", "NA"]


def test_row_names_before_the_columns_still_read_as_the_index(tmp_path):
    path = tmp_path / "r.csv"  # R's write.table: the header has no cell over the row names
    path.write_text('"a","b"\n"r1",1,2\n"r2",4,5\n')
    frame = read_table(path)
    assert frame.index.tolist() == ["r1", "r2"]
    assert frame["a"].tolist() == [1, 4] and frame["b"].tolist() == [2, 5]


def test_rows_two_cells_wider_than_the_header_are_refused(tmp_path):
    path = tmp_path / "w.csv"  # two separators ending each row: y, pred, g were all NaN
    path.write_text("y,pred,g\n1,0,a,,\n0,1,b,,\n")
    with pytest.raises(
        InputError, match=r"^--data: expected rows of 3 cells in w.csv.*got rows of 5"
    ):
        read_table(path)

"""Diff review 65 L: rows with two cells of row names (a two-level index that pandas'
``to_csv(index_label=False)`` writes) were read with the row names as the index before 19a2930c
and refused after it; only rows ending in empty cells are refused."""

import pytest

from trustlab.data.tables import read_table, require_columns
from trustlab.errors import InputError


def test_two_cells_of_row_names_still_read_as_the_index(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("y,pred,g\nu,0,1,1,a\nv,1,0,0,b\n")
    frame = read_table(path, exact_columns=("y", "pred", "g"))
    assert frame.index.tolist() == [("u", 0), ("v", 1)]
    assert frame["y"].tolist() == [1, 0] and frame["g"].tolist() == ["a", "b"]


@pytest.mark.parametrize("keep_default_na", [True, False])
def test_rows_ending_in_two_empty_cells_are_still_refused(tmp_path, keep_default_na):
    path = tmp_path / "w.csv"
    path.write_text("y,pred,g\n1,0,a,,\n0,1,b,,\n")
    with pytest.raises(InputError, match=r"^--data: expected rows of 3 cells in w.csv"):
        read_table(path, keep_default_na=keep_default_na)


def test_a_name_given_with_spaces_is_not_said_to_be_spaced_in_the_file(tmp_path):
    # 80569da8 said "the file names it 'y', with spaces" for --label ' y' under header 'y,pred'
    path = tmp_path / "t.csv"
    path.write_text("y,pred\n1,0\n")
    with pytest.raises(InputError, match=r"the file names it 'y', without spaces$"):
        require_columns(read_table(path), {"--label": " y"})


def test_a_utf32_file_is_told_to_name_utf32_not_utf16(tmp_path):
    # its mark FF FE 00 00 starts like UTF-16's: 7a1eef51 said --encoding utf-16, which read
    # the header as 'y\x00,\x00p...'
    path = tmp_path / "u.csv"
    path.write_text("y,pred\n1,0\n", encoding="utf-32")
    with pytest.raises(InputError, match=r"e\.g\. --encoding utf-32 \(the file starts with"):
        read_table(path)
    assert list(read_table(path, encoding="utf-32").columns) == ["y", "pred"]

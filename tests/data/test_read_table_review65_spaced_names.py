"""A header written with spaces after its commas (``y, pred, g``) names the columns ``' pred'``
and ``' g'``; the error for ``--pred pred`` listed them as ``y,  pred,  g``, as if ``pred`` were
there (review 65). It now names the spaced column."""

import pytest

from trustlab.data.tables import read_table, require_columns
from trustlab.errors import InputError


def test_a_column_named_with_spaces_is_named_in_the_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y, pred, g\n1, 0, a\n0, 1, b\n")
    table = read_table(path)
    with pytest.raises(InputError, match=r"^--pred: .*the file names it ' pred', with spaces"):
        require_columns(table, {"--label": "y", "--pred": "pred"})
    with pytest.raises(InputError) as info:
        require_columns(table, {"--group": "group"})
    assert "spaces" not in str(info.value)
    require_columns(table, {"--pred": " pred"})


def test_a_comma_separated_file_named_tsv_is_named_in_the_error(tmp_path):
    path = tmp_path / "t.tsv"  # read with tabs: one column 'y,pred,g', and no hint
    path.write_text("y,pred,g\n1,0,a\n0,1,b\n")
    with pytest.raises(InputError, match=r"separated by commas, .*one column: name it \.csv$"):
        require_columns(read_table(path), {"--label": "y"})


def test_a_utf16_file_is_told_to_name_utf16_not_latin1(tmp_path):
    path = tmp_path / "u.csv"  # a spreadsheet's "Unicode text": latin-1 read it as 'ÿþy\x00,...'
    path.write_text("y,pred\n1,0\n", encoding="utf-16")
    with pytest.raises(InputError, match=r"e\.g\. --encoding utf-16 \(the file starts with"):
        read_table(path)
    assert list(read_table(path, encoding="utf-16").columns) == ["y", "pred"]

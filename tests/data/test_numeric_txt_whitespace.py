"""A .txt table of numbers as numpy.savetxt writes it by default (space-separated, no header) is
read as numbers; it was read as one comma-separated column, its first line taken for a header."""

import numpy as np
import pytest

from trustlab.data.tables import read_numeric_table
from trustlab.errors import InputError


@pytest.mark.parametrize("delimiter", [" ", "\t", ","])
def test_savetxt_files_read_back(tmp_path, delimiter):
    array = np.arange(12.0).reshape(4, 3) / 7
    np.savetxt(tmp_path / "x.txt", array, delimiter=delimiter)
    assert np.array_equal(read_numeric_table(tmp_path / "x.txt", "x"), array)


def test_a_header_and_ragged_rows(tmp_path):
    (tmp_path / "h.txt").write_text("a b\n1 2\n3 4\n")
    assert read_numeric_table(tmp_path / "h.txt", "x").tolist() == [[1.0, 2.0], [3.0, 4.0]]
    (tmp_path / "r.txt").write_text("1 2\n3 4 5\n")
    with pytest.raises(InputError, match="^x: "):
        read_numeric_table(tmp_path / "r.txt", "x")


def test_a_csv_with_spaces_is_still_comma_separated(tmp_path):
    (tmp_path / "c.csv").write_text("1 2\n3 4\n")
    with pytest.raises(InputError, match="expected numbers only"):
        read_numeric_table(tmp_path / "c.csv", "x")

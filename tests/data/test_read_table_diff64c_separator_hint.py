"""Diff review 64 C: the separator hint of require_columns fired for any one-column file whose
name held a ';', '|' or tab, so a one-column file headed "note; see below" was said to be
separated by semicolons, and it told a semicolon .tsv that "a .csv is read with commas". The hint
now needs the wanted column among the header's pieces and names the .csv to save."""

from __future__ import annotations

import pytest

from trustlab.data.tables import read_table, require_columns
from trustlab.errors import InputError


def test_a_semicolon_in_the_text_of_a_one_column_file_gets_no_hint(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("note; see below\nx; y\n")
    with pytest.raises(InputError) as err:
        require_columns(read_table(path), {"--label": "y"})
    assert "separated" not in str(err.value)


def test_a_semicolon_tsv_is_told_to_save_a_csv(tmp_path):
    path = tmp_path / "data.tsv"
    path.write_text("y;pred;g\n0;1;a\n")
    with pytest.raises(InputError) as err:
        require_columns(read_table(path), {"--label": "y"})
    assert "separated by semicolons, but was read as one column" in str(err.value)
    assert "a .csv is read with commas" not in str(err.value)

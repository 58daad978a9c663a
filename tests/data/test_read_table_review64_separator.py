"""Review 64: a .csv separated by semicolons (a spreadsheet's export in many locales) or tabs is
read as one column named 'y;pred;g', and an option naming a column said only "expected a column
of the data, got 'y' (columns: y;pred;g)". The error now says the file looks separated by
semicolons or tabs and what to do."""

from __future__ import annotations

import pytest

from trustlab.data.tables import read_table, require_columns
from trustlab.errors import InputError


@pytest.mark.parametrize(
    ("sep", "hint"), [(";", "separated by semicolons.*save it with commas"), ("\t", "tabs.*.tsv")]
)
def test_a_file_not_separated_by_commas_says_so(tmp_path, sep, hint):
    path = tmp_path / "data.csv"
    path.write_text(sep.join(["y", "pred", "g"]) + "\n" + sep.join(["0", "1", "a"]) + "\n")
    frame = read_table(path)
    with pytest.raises(InputError, match=rf"--label: expected a column .*{hint}"):
        require_columns(frame, {"--label": "y"})


def test_a_missing_column_of_a_comma_file_gets_no_separator_hint(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("y,pred,g\n0,1,a\n")
    with pytest.raises(InputError) as err:
        require_columns(read_table(path), {"--label": "label"})
    assert "separated" not in str(err.value)
    path.write_text("y\n0\n")  # one column: no separator in its name, no hint
    with pytest.raises(InputError) as err:
        require_columns(read_table(path), {"--label": "label"})
    assert "separated" not in str(err.value)

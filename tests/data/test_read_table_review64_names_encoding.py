"""A column given as a list or dict (run_audit(label=["y"])) ended in pandas' TypeError
'unhashable type: list', and an encoding that is not a string (encoding=5) in codecs'
TypeError 'lookup() argument must be str, not int': both are now InputErrors naming the
argument."""

import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.data.tables import read_table, require_columns
from trustlab.errors import InputError

TABLE = pd.DataFrame({"y": [0, 1] * 3, "g": ["u", "v", "v"] * 2, "p": [0, 1, 1] * 2})


@pytest.mark.parametrize(
    "option, columns", [("label", dict(label=["y"], group="g")), ("pred", dict(pred={"p": 1}))]
)
def test_a_column_that_is_no_name_is_refused(tmp_path, option, columns):
    arguments = {"label": "y", "group": "g", **columns}
    with pytest.raises(InputError, match=rf"^{option}: expected a column of the data, got "):
        run_audit(TABLE, out=tmp_path / "out", sections=["overview"], **arguments)
    with pytest.raises(InputError) as info:
        require_columns(TABLE, {"--label": ["y"]})
    assert info.value.argument == "--label"


@pytest.mark.parametrize("encoding", [5, b"utf-8"])
def test_an_encoding_that_is_no_string_is_refused(tmp_path, encoding):
    path = tmp_path / "t.csv"
    TABLE.to_csv(path, index=False)
    with pytest.raises(InputError, match="^--encoding: expected a text encoding"):
        read_table(path, encoding=encoding)
    assert read_table(path, encoding="utf-8").shape == (6, 3)  # a name still reads

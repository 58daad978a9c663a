"""A DataFrame group column mixing numbers and text escaped numpy's TypeError ("'<' not
supported between instances of 'int' and 'str'"); a label column mixing them was refused
naming ``pred`` ("expected predictions of the same kind as the labels") with no pred given."""

import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError

TABLE = pd.DataFrame(
    {"x": range(12), "y": ["no", "yes", "yes"] * 4, "g": ["u", "v"] * 6, "p": ["no", "yes"] * 6}
)


@pytest.mark.parametrize("pred", ["p", None])
@pytest.mark.parametrize(
    ("column", "mixed", "argument", "kinds"),
    [
        ("g", [1, "v"] * 6, "group", "int, str"),
        ("y", [1, "yes", 2.0] * 4, "label", "float, int, str"),
    ],
)
def test_a_column_mixing_numbers_and_text_is_refused_naming_it(
    tmp_path, pred, column, mixed, argument, kinds
):
    table = TABLE.assign(**{column: mixed})
    with pytest.raises(
        InputError, match=rf"^{argument}: expected values of one kind .*got 'a mix of {kinds}'"
    ):
        run_audit(table, label="y", group="g", pred=pred, out=tmp_path / "out", sections=[])
    assert not (tmp_path / "out").exists()

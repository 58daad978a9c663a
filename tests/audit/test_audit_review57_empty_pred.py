"""A --pred column with no value on any row was refused as "expected rows with a label and a
group value, got none among its N rows", though every row held both: the message now names the
prediction and the empty column."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def test_an_empty_prediction_column_is_named(tmp_path):
    table = pd.DataFrame({"y": ["a", "b"] * 3, "g": ["u", "u", "v"] * 2, "p": [np.nan] * 6})
    with pytest.raises(InputError) as info:
        run_audit(table, label="y", group="g", pred="p", out=tmp_path / "out", sections=[])
    assert str(info.value) == (
        "data: expected rows with a label, group and prediction value, got none among its 6 "
        "rows (missing values: p: 6)"
    )

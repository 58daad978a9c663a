"""A feature column whose only value is infinity (a ratio whose denominator is always zero) was
left out of the default models as single-valued, with a note, and the audit ran; the infinity
check of d4c0e436 refused it ('got infinity in 'r' (8 rows)'). Such a column is again left to
usable_features; a column with other values beside infinity is still refused."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit.table import load_table, usable_features
from trustlab.errors import InputError


def _table(column) -> pd.DataFrame:
    return pd.DataFrame(
        {"y": [0, 1] * 4, "g": ["u", "u", "v", "v"] * 2, "x": range(8), "r": column}
    )


@pytest.mark.parametrize("column", [[np.inf] * 8, [np.inf, np.nan] * 4, [-np.inf] * 8])
def test_a_column_of_infinity_only_is_left_out_as_before(column):
    table = load_table(_table(column), "y", "g", None, None, trained=True)
    assert table.features == ["x", "r"]
    kept, notes = usable_features(table.frame[table.features])
    assert kept == ["x"] and "r (one value)" in notes[0]


def test_infinity_beside_other_values_is_still_refused():
    with pytest.raises(InputError, match=r"infinity in 'r' \(8 rows\)"):
        load_table(_table([np.inf, -np.inf] * 4), "y", "g", None, None, trained=True)

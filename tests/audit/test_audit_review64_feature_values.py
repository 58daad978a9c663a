"""A feature column holding infinity (a CSV's 'inf', a ratio divided by zero) ended the audit in
scikit-learn's ValueError ('Input X contains infinity', 'trustlab: unexpected failure', exit 1)
after the data was loaded; a DataFrame column mixing numbers and text in OneHotEncoder's
TypeError. Both are now an InputError naming data and the column, before any training."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.audit.table import load_table
from trustlab.errors import InputError


def _table(column) -> pd.DataFrame:
    return pd.DataFrame({"y": [0, 1] * 4, "g": ["u", "u", "v", "v"] * 2, "my x": column})


def test_infinity_in_a_feature_is_named(tmp_path):
    column = [0.5, np.inf, 1.5, 2.0, -np.inf, 0.1, np.nan, 3.0]
    with pytest.raises(InputError) as info:
        run_audit(_table(column), label="y", group="g", out=tmp_path / "out")
    assert info.value.argument == "data"
    assert "infinity in 'my x' (2 rows)" in str(info.value)
    assert "(--exclude 'my x')" in str(info.value)
    assert not (tmp_path / "out").exists()  # refused before any file is written


def test_a_feature_mixing_numbers_and_text_is_named(tmp_path):
    column = [1, "a", 2.5, None, "b", 3, "c", 4]
    with pytest.raises(InputError, match="got 'my x' mixing float, int, str"):
        run_audit(_table(column), label="y", group="g", out=tmp_path / "out")


def test_finite_numbers_text_and_gaps_still_load():
    table = _table(["a", "b", None, "a", "b", "a", "b", "a"])  # text with a gap: imputed later
    table["z"] = [0.5, np.nan, 1.5, 2.0, -1e300, 0.1, 1.0, 3.0]  # finite, with a gap
    loaded = load_table(table, "y", "g", None, None, trained=True)
    assert loaded.features == ["my x", "z"]
    # a pred audit trains nothing: the feature is not checked
    table["p"], table["my x"] = table["y"], np.inf
    assert load_table(table, "y", "g", "p", None, trained=False).features == ["my x", "z"]

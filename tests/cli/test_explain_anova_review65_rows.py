"""Review 65: ``explain anova-tpnn fit`` on a table of fewer than 2 rows says so.

A one-row table without a gap was refused as "expected at least 2 rows without a missing value,
got 1 of 1 (--drop-missing drops the others); impute the gaps or leave out the columns that have
them (--exclude)" (a header-only table: "got 0 of 0"): advice about gaps the table does not
have. Now it says the table is too short; a table whose gaps leave too few rows is unchanged.
A column named twice in ``--features`` is refused naming ``--features``, not ``--data``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from cli_helpers import one_line


@pytest.mark.parametrize("n_rows", [0, 1])
def test_fit_on_a_table_too_short_says_so(run, tmp_path, n_rows):
    frame = pd.DataFrame({"a": [1.0, 2.0], "y": [0.5, 1.5]}).iloc[:n_rows]
    frame.to_csv(tmp_path / "short.csv", index=False)
    code, _, err = run(
        "explain", "anova-tpnn", "fit", "--data", tmp_path / "short.csv", "--label", "y"
    )
    line = one_line(err)
    assert code == 2, err
    assert line == (
        f"trustlab: error: --data: expected a table of at least 2 rows to fit on, got {n_rows} "
        "(short.csv)"
    )


def test_fit_with_a_feature_named_twice_names_features(run, tmp_path):
    """``--features a,b,a`` was refused as "--data: expected distinct column names"."""
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 1.0, 2.0], "y": [0.5, 1.5, 1.0]}).to_csv(
        tmp_path / "t.csv", index=False
    )
    args = ["explain", "anova-tpnn", "fit", "--data", tmp_path / "t.csv", "--label", "y"]
    code, _, err = run(*args, "--features", "a,b,a")
    assert code == 2, err
    assert (
        one_line(err) == "trustlab: error: --features: expected each column once, got 'a' 2 times"
    )

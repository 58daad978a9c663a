"""A date or duration label, group or prediction column is audited as its text (review 62)."""

import numpy as np
import pandas as pd

from trustlab.audit.table import load_table


def test_a_date_group_is_named_one_way():
    days = pd.to_datetime(["2020-01-01", "2021-06-01", None, "2021-06-01"] * 5)
    frame = pd.DataFrame(
        {
            "y": ["a", "b", "a", "b"] * 5,
            "g": days,
            "p": pd.to_timedelta(["1D", "2D", "1D", "2D"] * 5),
            "x": np.arange(20.0) % 3,
        }
    )
    table = load_table(frame, "y", "g", "p", None)
    # as predictions.csv writes them; they were Timestamps, which report.json wrote 3 ways
    assert table.frame["g"].tolist() == ["2020-01-01", "2021-06-01", "2021-06-01"] * 5
    assert set(table.frame["p"]) == {"1 days", "2 days"}
    assert len(table.frame) == 15  # the row without a date is dropped, as before

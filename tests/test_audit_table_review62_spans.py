"""A group, label or prediction column of periods, intervals (pd.cut) or categories of dates is
audited as the text predictions.csv writes (diff review 62 D)."""

import pandas as pd

from trustlab.audit.table import load_table


def test_periods_intervals_and_categorical_dates_are_audited_as_text():
    frame = pd.DataFrame(
        {
            "y": pd.Categorical(pd.to_datetime(["2020-01-01", "2021-06-01"] * 6)),
            "g": pd.cut([15, 45, 45] * 4, [0, 30, 60]),
            "p": pd.PeriodIndex(["2020-01", "2021-06"] * 6, freq="M"),
            "x": [0.0, 1.0, 2.0] * 4,
        }
    )
    table = load_table(frame, "y", "g", "p", None)
    # were Timestamps (named 3 ways in report.json) and Interval / Period objects (the
    # overview and fairness sections failed: not JSON values)
    assert table.frame["y"].tolist() == ["2020-01-01", "2021-06-01"] * 6
    assert table.frame["g"].tolist() == ["(0, 30]", "(30, 60]", "(30, 60]"] * 4
    assert table.frame["p"].tolist() == ["2020-01", "2021-06"] * 6
    texts = frame[["y", "g", "p"]].to_csv(index=False).splitlines()[1:]
    assert texts == table.frame[["y", "g", "p"]].to_csv(index=False).splitlines()[1:]

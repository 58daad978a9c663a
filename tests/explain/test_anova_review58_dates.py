"""Review 58: a date (or duration) column is one level whatever file it came from.

A model fitted on dates (a Parquet file, a DataFrame of datetimes) stored each level as its text,
"2024-03-01 00:00:00", while the same dates written to a CSV file and read back are
"2024-03-01": every row was a level not seen in training (a warning naming the training dates)
and its components counted 0, so `predict --data new.csv` changed the predictions.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


def _csv_round_trip(frame: pd.DataFrame) -> pd.DataFrame:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    buffer.seek(0)
    return pd.read_csv(buffer)


def _frame(column: pd.Series) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(58)
    frame = pd.DataFrame({"x": rng.normal(size=len(column)), "when": column})
    y = frame["x"].to_numpy() + 2.0 * (np.arange(len(column)) % 3)
    return frame, y


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_datetime("2024-03-01") + pd.to_timedelta(np.arange(30) % 3, unit="D")),
        pd.Series(pd.to_timedelta(np.arange(30) % 3 + 1, unit="D")),
        pd.Series(
            pd.to_datetime("2024-03-01 10:00:00.5") + pd.to_timedelta(np.arange(30) % 3, "h")
        ),
        # a negative duration's time of day has a "+": "-1 days +00:00:00", in a CSV "-1 days"
        pd.Series(pd.to_timedelta(np.arange(30) % 3 - 2, unit="D")),
        pd.Series(pd.to_timedelta(np.arange(30) % 3 - 2, unit="D") + pd.Timedelta("1.5s")),
    ],
    ids=["midnight-dates", "whole-days", "fractional-seconds", "negative-days", "negative-1.5s"],
)
def test_dates_read_back_from_csv_are_the_training_levels(column):
    frame, y = _frame(column)
    model = ANOVATPNN(max_epochs=2, n_basis=2, random_state=0).fit(frame, y)
    text = _csv_round_trip(frame)
    assert pd.api.types.is_string_dtype(text["when"])  # the CSV gives the dates as text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not seen in training" warning
        from_text = model.predict(text)
    np.testing.assert_array_equal(from_text, model.predict(frame))


def test_a_model_fitted_on_date_text_reads_dates():
    column = pd.Series(pd.to_datetime("2024-03-01") + pd.to_timedelta(np.arange(30) % 3, unit="D"))
    frame, y = _frame(column)
    text = _csv_round_trip(frame)
    model = ANOVATPNN(max_epochs=2, n_basis=2, random_state=0).fit(text, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(model.predict(frame), model.predict(text))

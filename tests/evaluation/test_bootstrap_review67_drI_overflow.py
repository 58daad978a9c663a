"""percentile_interval: an end on a sample whose next one lies beyond float range (review 67 I).

e897981f skips the lower/higher lookups unless a sample is infinite or a negative zero, and says
the ends stay bit for bit those of the three-quantile computation. They did not where numpy's
linear interpolation overflows at an exact sample: with samples -1.7e308, -1.7e308, 1.7e308,
1.7e308, 1.7e308 and level 0.5 the lower end sits on the second sample (gamma 0) and numpy takes
-1.7e308 + inf * 0 = NaN. Measured on e897981f: [nan, 1.7e308]; on its parent (three quantiles)
[-1.7e308, 1.7e308], the sample. Now a NaN end also takes the lookups.
"""

from __future__ import annotations

import warnings

import numpy as np

from trustlab.evaluation._bootstrap import percentile_interval


def test_an_end_on_a_sample_next_to_one_past_float_range_is_that_sample():
    big = 1.7e308
    samples = np.array([[-big, 0.5], [-big, 1.0], [big, 2.0], [big, 3.0], [big, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = percentile_interval(samples, 0.5)
    np.testing.assert_array_equal(got, [[-big, big], [1.0, 3.0]])


def test_an_all_nan_column_still_gives_nan_ends():
    samples = np.array([[np.nan, 1.0], [np.nan, 2.0], [np.nan, 3.0]])
    got = percentile_interval(samples, 0.5)
    assert np.isnan(got[0]).all()
    np.testing.assert_array_equal(got[1], [1.5, 2.5])

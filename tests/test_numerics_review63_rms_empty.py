"""Diff review 63 C: ``root_mean_square`` is ``sqrt(mean(values**2))``; on an empty slice numpy's
``max`` (for the power of 2) raised 'zero-size array to reduction operation maximum which has no
identity' where the plain formula gives NaN (with numpy's 'Mean of empty slice' warning)."""

from __future__ import annotations

import warnings

import numpy as np

from trustlab._numerics import root_mean_square


def _plain(values, axis=None):
    return np.sqrt((values**2).mean(axis=axis))


def test_empty_slices_give_nan_as_the_plain_formula():
    values = np.zeros((0, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 'Mean of empty slice'
        for axis in (None, 0, 1):
            got, want = root_mean_square(values, axis=axis), _plain(values, axis)
            np.testing.assert_array_equal(got, want)  # NaN where empty, shape (0,) along 1
            assert np.shape(got) == np.shape(want)


def test_nan_and_inf_as_the_plain_formula():
    values = np.array([[1.0, np.nan], [2.0, np.inf], [-np.inf, 3.0]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(root_mean_square(values, axis=axis), _plain(values, axis))

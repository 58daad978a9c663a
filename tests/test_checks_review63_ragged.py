"""Ragged lists of labels are refused naming the argument (stop 63).

``as_1d([[1, 2], [3]], 'y')`` let numpy's "setting an array element with a sequence. The
requested array has an inhomogeneous shape ..." ValueError through: a raw traceback from every
public function whose labels, groups or clusters go through it.
"""

import numpy as np
import pytest

from trustlab._checks import as_1d
from trustlab.errors import InputError
from trustlab.evaluation import cluster_bootstrap_ci


@pytest.mark.parametrize("ragged", [[[1, 2], [3]], [1, [2, 3]], (["a"], ["b", "c"])])
def test_a_ragged_list_is_refused_naming_the_argument(ragged):
    with pytest.raises(InputError, match=r"^y: expected a 1-dimensional array, got") as info:
        as_1d(ragged, "y")
    assert info.value.argument == "y"


def test_public_clusters_argument_names_itself():
    with pytest.raises(InputError, match=r"^clusters: expected a 1-dimensional array"):
        cluster_bootstrap_ci([0.1, 0.2, 0.3], [[0, 1], [1], 2])


@pytest.mark.parametrize(
    ("values", "got"),
    [
        (np.array([1.0, np.nan]), "NaN"),
        (np.array(["2020-01-01", "NaT"], dtype="datetime64[D]"), "NaT"),
        (np.array([1, "NaT"], dtype="timedelta64[s]"), "NaT"),
        (np.array([np.datetime64("2020-01-01"), np.datetime64("NaT")], dtype=object), "1"),
    ],
)
def test_missing_values_are_still_refused(values, got):
    with pytest.raises(InputError, match=f"^y: expected no missing values, got {got}"):
        as_1d(values, "y")


def test_complete_labels_pass_unchanged():
    dates = np.array(["2020-01-01", "2021-06-30"], dtype="datetime64[D]")
    assert np.array_equal(as_1d(dates, "y"), dates)
    assert as_1d([[1], [2], [3]], "y").tolist() == [1, 2, 3]

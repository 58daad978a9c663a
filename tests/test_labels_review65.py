"""Labels numpy cannot sort are one InputError naming the argument, wherever labels are sorted
(one helper, trustlab._labels.sorted_unique, for DCP's labels and groups and DSI's groups)."""

import numpy as np
import pytest

from trustlab._labels import sorted_unique
from trustlab.errors import InputError
from trustlab.fairness import dcp_inputs
from trustlab.privacy import group_gradient_differences

MIXED = np.array([0, 1, "a", 0], dtype=object)


def test_sorted_unique_sorts_and_names_mixed_labels():
    assert sorted_unique(np.array([2, 1, 2]), "y").tolist() == [1, 2]
    values, inverse = sorted_unique(np.array(["b", "a", "b"]), "g", return_inverse=True)
    assert values.tolist() == ["a", "b"] and inverse.tolist() == [1, 0, 1]
    with pytest.raises(
        InputError, match=r"^y: expected labels of one comparable type .*got int and str$"
    ):
        sorted_unique(MIXED, "y")


def test_dcp_with_given_labels_names_mixed_true_labels():
    # the labels= path sorted y_true without a check: numpy's raw TypeError
    # "'<' not supported between instances of 'str' and 'int'"
    with pytest.raises(InputError, match=r"^y_true: expected labels of one comparable type"):
        dcp_inputs(MIXED, [0, 1, 1, 0], ["a", "a", "b", "b"], labels=[0, 1])


def test_dcp_and_dsi_mixed_groups_say_the_same():
    with pytest.raises(
        InputError, match=r"^groups: expected labels of one comparable type .*got int and str$"
    ):
        dcp_inputs([0, 1, 1, 0], [0, 1, 0, 0], MIXED)
    with pytest.raises(
        InputError, match=r"^groups: expected labels of one comparable type .*got int and str$"
    ):
        group_gradient_differences(np.ones((4, 2)), MIXED)

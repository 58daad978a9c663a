"""Diff review 65 K of c0e809c6: the labels= path of dcp_inputs sorted y_true and y_pred through
sorted_unique, but the given labels themselves still went to np.unique: labels=[0, None] stopped
on numpy's raw TypeError "'<' not supported between instances of 'NoneType' and 'int'". Now the
same refusal, naming labels; labels that sort are taken as before."""

import pytest

from trustlab.errors import InputError
from trustlab.fairness import dcp_inputs

ARGS = ([0, 1, 1, 0], [0, 1, 1, 0], ["a", "a", "b", "b"])


def test_given_labels_that_do_not_sort_are_refused_naming_labels():
    with pytest.raises(
        InputError, match=r"^labels: expected labels of one comparable type .*got NoneType and int$"
    ) as info:
        dcp_inputs(*ARGS, labels=[0, None])
    assert info.value.argument == "labels"


def test_given_labels_that_sort_are_taken():
    assert dcp_inputs(*ARGS, labels=[1, 0]).labels == (1, 0)
    with pytest.raises(InputError, match=r"^labels: expected distinct values"):
        dcp_inputs(*ARGS, labels=[0, 1, 0])

"""Ragged labels y given to the region models' fit and score are refused in words (review 66 R).

11864bbb refused ragged labels of evaluate_regions but left the same input of the models' own
fit (check_training_data) and score (check_known_labels): numpy's raw ValueError 'setting an
array element with a sequence. The requested array has an inhomogeneous shape...'.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import BlackBoxClassifier  # noqa: E402
from trustlab.explain.regions.inputs import check_known_labels, check_training_data  # noqa: E402

X = np.zeros((2, 3, 8, 8), dtype=np.float32)
RAGGED = [[0, 1], [1]]


def test_fit_refuses_ragged_labels_naming_y():
    with pytest.raises(InputError, match=r"^y: expected 2 labels \(one per image\)") as info:
        BlackBoxClassifier(max_epochs=1).fit(X, RAGGED)
    assert info.value.argument == "y"


def test_training_data_refuses_ragged_labels():
    with pytest.raises(InputError, match=r"^y: expected 2 labels"):
        check_training_data(X, RAGGED)


def test_known_labels_refuse_ragged_labels_naming_the_argument():
    with pytest.raises(InputError, match=r"^y_true: expected 2 labels \(one per image\)"):
        check_known_labels(RAGGED, 2, np.array([0, 1]), "y_true")


@pytest.mark.parametrize("y", [[0, 1], (0, 1), np.array([0, 1]), ["a", "b"]])
def test_regular_labels_read_as_before(y):
    _, classes, y_idx = check_training_data(X, y)
    assert list(classes) == sorted(set(np.asarray(y).tolist()))
    assert y_idx.tolist() == [0, 1]
    assert check_known_labels(y, 2, classes).tolist() == list(np.asarray(y))

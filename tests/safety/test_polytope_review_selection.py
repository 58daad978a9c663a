"""Second review of the detector selection's refusals: they name the array that is off and say
what came (a test_acts with another number of layers was blamed on ``layers``; too few rows of
a class for the folds said only 'got an array of shape (2,)')."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety import compare_detectors, select_detector

GRID = {"n_facets": [1]}


def _layered(n_safe, n_unsafe, n_layers=2, width=3, seed=0):
    rng = np.random.default_rng(seed)
    acts = rng.normal(size=(n_safe + n_unsafe, n_layers, width))
    return acts, np.r_[np.zeros(n_safe), np.ones(n_unsafe)]


def test_too_few_rows_of_a_class_says_how_many_came():
    acts, unsafe = _layered(9, 3)
    with pytest.raises(InputError) as exc:
        select_detector(acts, unsafe, [0, 1], grid=GRID, max_epochs=1)
    assert str(exc.value) == (
        "unsafe: expected at least 4 rows of each class for 4-fold CV, "
        "got '3 unsafe and 9 safe rows'"
    )


@pytest.mark.parametrize("shape", [(1, 3), (2, 4)])
def test_a_test_set_of_another_shape_is_named_as_test_acts(shape):
    train, train_unsafe = _layered(20, 20)
    test, test_unsafe = _layered(5, 5, *shape, seed=1)
    with pytest.raises(InputError) as exc:
        compare_detectors(
            train, train_unsafe, test, test_unsafe, [0, 1], polytope_grid=GRID, max_epochs=1
        )
    assert exc.value.argument == "test_acts"
    assert str(exc.value).startswith("test_acts: expected shape (n, 2, 3) as train_acts, got")

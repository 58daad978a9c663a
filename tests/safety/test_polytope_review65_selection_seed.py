"""Diff review 65 Q: select_detector and compare_detectors refuse a seed scikit-learn's folds do
not take (-1, 2**32) as InputError naming random_state; it was a raw ValueError ('Seed must be
between 0 and 2**32 - 1') from StratifiedKFold after the checks had passed."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.polytope.selection import select_detector


@pytest.mark.parametrize("seed", [-1, 2**32, np.uint64(2**63)])
def test_select_detector_refuses_a_seed_the_folds_cannot_take(seed):
    X = np.random.default_rng(0).normal(size=(16, 2, 3))
    unsafe = np.array([0, 1] * 8)
    with pytest.raises(InputError, match=r"^random_state: expected a seed in \[0, 2\*\*32-1\]"):
        select_detector(X, unsafe, [0, 1], random_state=seed, grid={"n_facets": [1]}, max_epochs=1)

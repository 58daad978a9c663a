"""Review pass 52 of the black-box DSI mechanism: a random fn, and an fn that raises on a subset."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.arange(12.0).reshape(6, 2)
GROUPS = [0, 0, 1, 1, 2, 2]


def test_a_random_fn_is_refused_naming_fn():
    # e.g. a model trained with random_state=None: the differences would measure its randomness
    rng = np.random.default_rng(0)
    mech = DSIMechanism(
        lambda rows: rows.mean(axis=0) + rng.normal(size=2) * 1e-3, epsilon=1.0, delta=1e-5
    )
    with pytest.raises(InputError, match=r"fn: expected a deterministic function.*random_state"):
        mech.fit(X, GROUPS)


def test_a_seeded_fn_is_accepted_and_runs_on_the_data_twice():
    sizes = []

    def fn(rows):
        sizes.append(len(rows))
        noise = np.random.default_rng(len(rows)).normal(size=2) * 1e-3  # fixed per subset
        return rows.mean(axis=0) + noise

    mech = DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit(X, GROUPS)
    assert sorted(sizes) == [4, 4, 4, 6, 6]
    assert mech.differences_.shape == (3, 2)
    np.testing.assert_array_equal(mech.output_, fn(X))


def test_rounding_level_rerun_changes_are_tolerated():
    full_runs = []

    def fn(rows):  # the last bits differ between runs, as threaded reductions can make them
        out = np.round(rows.mean(axis=0), 12)
        if len(rows) == len(X):
            full_runs.append(1)
            return out * (1.0 + 1e-15 * (len(full_runs) - 1))
        return out

    mech = DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit(X, GROUPS)
    assert mech.constrained_.sum() == 2


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_an_exception_in_fn_names_the_subset_it_ran_on(n_jobs):
    def fn(rows):
        if len(rows) < 6:
            raise ValueError("needs samples of at least 2 classes")
        return rows.mean(axis=0)

    mech = DSIMechanism(fn, epsilon=1.0, delta=1e-5, n_jobs=n_jobs)
    with pytest.raises(ValueError, match="at least 2 classes") as info:
        mech.fit(X, GROUPS)
    assert info.value.__notes__ == ["raised by fn(data without group 0, 4 records)"]


def test_an_fn_that_scales_its_input_in_place_is_refused_not_silently_misread():
    # the first run doubled the caller's array, so every later subset was of other data
    data = X.copy()

    def fn(rows):
        rows *= 2.0
        return rows.mean(axis=0)

    with pytest.raises(InputError, match="modifies its input in place"):
        DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit(data, GROUPS)

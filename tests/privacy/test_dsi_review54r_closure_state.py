"""DSIMechanism.fit checkpoint (review pass 54r): the code hash of bb8e876 hashed fn's closure
and default values whole, so an ``fn`` whose closure or default holds an object it updates (a
call log, a cache, a model trained in place) had another hash after the runs done before a
crash, and the resume of the same ``fn`` was refused as "fn's code differ". Such objects now
count by their type only (object state is not seen, as the docs say); numbers, text and arrays
still tell two functions apart."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.random.default_rng(54).normal(size=(24, 2))
GROUPS = np.arange(24) % 6


class Stop(Exception):
    pass


def stop_after(runs: int):
    def progress(done, total):
        if done == runs:
            raise Stop

    return progress


def fit(fn, folder, progress=None):
    mechanism = DSIMechanism(fn, epsilon=1.0, delta=1e-5)
    return mechanism.fit(X, GROUPS, checkpoint=folder, progress=progress)


class CallLog:
    def __init__(self):
        self.calls = 0


def make_logged():
    log = CallLog()

    def fn(rows):
        log.calls += 1
        return rows.mean(axis=0)

    return fn


def cached(rows, cache={}):  # noqa: B006 - a cache filled by the runs
    cache[len(cache)] = rows.shape
    return rows.mean(axis=0)


@pytest.mark.parametrize("fn", [make_logged()], ids=["closure"])
def test_the_same_fn_resumes_after_its_state_changed(tmp_path, fn):
    with pytest.raises(Stop):
        fit(fn, tmp_path / "ck", progress=stop_after(3))
    resumed = fit(fn, tmp_path / "ck")
    whole = fit(fn, tmp_path / "fresh")
    np.testing.assert_array_equal(resumed.differences_, whole.differences_)


def test_closure_numbers_and_arrays_still_tell_functions_apart(tmp_path):
    def make(shift):
        def fn(rows):
            return rows.mean(axis=0) + shift

        return fn

    fit(make(np.zeros(2)), tmp_path / "ck")
    fit(make(np.zeros(2)), tmp_path / "ck")
    with pytest.raises(InputError, match=r"fn's code differ"):
        fit(make(np.ones(2)), tmp_path / "ck")


def test_closure_functions_are_told_apart_by_name(tmp_path):
    def make(reduce):
        def fn(rows):
            return reduce(rows, axis=0)

        return fn

    fit(make(np.mean), tmp_path / "ck")
    fit(make(np.mean), tmp_path / "ck")
    with pytest.raises(InputError, match=r"fn's code differ"):
        fit(make(np.median), tmp_path / "ck")


def test_a_dict_of_plain_values_counts_by_value_so_a_filled_default_cache_is_refused(tmp_path):
    # a dict or list of numbers is read as parameters (next test): one filled in place by the
    # runs differs after them, so the same session's rerun is refused (the docs say so)
    with pytest.raises(Stop):
        fit(cached, tmp_path / "ck", progress=stop_after(3))
    with pytest.raises(InputError, match=r"fn's code differ"):
        fit(cached, tmp_path / "ck")


@pytest.mark.parametrize(
    ("first", "second"),
    [([0.25, 0.75], [0.1, 0.9]), ({"q": 0.5}, {"q": 0.9}), ({0.1, 0.2}, {0.1, 0.3})],
    ids=["list", "dict", "set"],
)
def test_containers_of_parameters_tell_functions_apart(tmp_path, first, second):
    # they counted by their type only, so the second fn resumed the first one's runs and
    # returned its differences without a word (review 54s, C2)
    def make(levels):
        values = sorted(levels.values() if isinstance(levels, dict) else levels)

        def fn(rows):
            return np.quantile(rows, values, axis=0).ravel()

        return fn

    fit(make(first), tmp_path / "ck")
    fit(make(first), tmp_path / "ck")  # the same parameters resume
    with pytest.raises(InputError, match=r"fn's code differ"):
        fit(make(second), tmp_path / "ck")

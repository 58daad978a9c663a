"""DSIMechanism.fit: progress over the n + 2 runs of fn, and a checkpoint an interrupted fit
resumes from (a crash or Ctrl-C loses no finished run)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.random.default_rng(0).normal(size=(40, 3))
GROUPS = np.arange(40) % 8
CALLS = []
STOP_AT = [None]


def mean_fn(rows):
    """The mean; records its calls and raises KeyboardInterrupt at call STOP_AT[0]."""
    CALLS.append(len(rows))
    if STOP_AT[0] is not None and len(CALLS) == STOP_AT[0]:
        raise KeyboardInterrupt
    return rows.mean(axis=0)


@pytest.fixture(autouse=True)
def _reset():
    CALLS.clear()
    STOP_AT[0] = None


def mechanism():
    return DSIMechanism(mean_fn, epsilon=1.0, delta=1e-5)


def test_interrupted_fit_resumed_from_its_checkpoint_equals_the_uninterrupted_fit(tmp_path):
    whole = mechanism().fit(X, GROUPS)
    CALLS.clear()
    STOP_AT[0] = 6  # Ctrl-C during the sixth run: five are finished
    with pytest.raises(KeyboardInterrupt):
        mechanism().fit(X, GROUPS, checkpoint=tmp_path / "ck")
    CALLS.clear()
    STOP_AT[0] = None
    seen = []
    resumed = mechanism().fit(
        X, GROUPS, checkpoint=tmp_path / "ck", progress=lambda d, t: seen.append((d, t))
    )
    assert len(CALLS) == 10 - 5  # n + 2 runs, five kept
    assert seen[0] == (5, 10) and seen[-1] == (10, 10)
    assert [d for d, _ in seen] == list(range(5, 11))
    np.testing.assert_array_equal(resumed.output_, whole.output_)
    np.testing.assert_array_equal(resumed.differences_, whole.differences_)
    assert resumed.covariance_.trace == whole.covariance_.trace
    np.testing.assert_array_equal(resumed.release(random_state=3), whole.release(random_state=3))
    CALLS.clear()  # a finished checkpoint: a rerun runs fn no more
    mechanism().fit(X, GROUPS, checkpoint=tmp_path / "ck")
    assert CALLS == []


def test_progress_counts_every_run_without_checkpoint():
    seen = []
    mechanism().fit(X, GROUPS, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(k, 10) for k in range(11)]


def test_checkpoint_of_another_fit_is_refused(tmp_path):
    mechanism().fit(X, GROUPS, checkpoint=tmp_path / "ck")
    with pytest.raises(InputError, match="checkpoint: .*the data differ"):
        mechanism().fit(X * 2, GROUPS, checkpoint=tmp_path / "ck")
    with pytest.raises(InputError, match="checkpoint: .*the group labels"):
        mechanism().fit(X, np.arange(40) % 5, checkpoint=tmp_path / "ck")
    other = DSIMechanism(lambda rows: rows.sum(axis=0), epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match="checkpoint: .*fn's name"):
        other.fit(X, GROUPS, checkpoint=tmp_path / "ck")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="checkpoint: expected an empty or new folder"):
        mechanism().fit(X, GROUPS, checkpoint=tmp_path / "busy")
    with pytest.raises(InputError, match="progress: expected a callable"):
        mechanism().fit(X, GROUPS, progress=3)


def test_runs_finished_in_workers_survive_an_error_on_another_subset(tmp_path):
    flag = tmp_path / "boom"

    def fn(rows):  # fails on the subset without group 0 while the flag file exists
        if len(rows) == 35 and rows[0, 0] == X[1, 0] and flag.exists():
            raise ValueError("boom")
        return rows.mean(axis=0)

    whole = DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit(X, GROUPS)
    flag.touch()
    with pytest.raises(ValueError, match="boom"):
        DSIMechanism(fn, epsilon=1.0, delta=1e-5, n_jobs=2).fit(
            X, GROUPS, checkpoint=tmp_path / "ck"
        )
    # the two runs on the full data start first; one finished before the failing run began
    assert list((tmp_path / "ck").glob("run_*.npy"))
    flag.unlink()
    resumed = DSIMechanism(fn, epsilon=1.0, delta=1e-5, n_jobs=2).fit(
        X, GROUPS, checkpoint=tmp_path / "ck"
    )
    np.testing.assert_array_equal(resumed.differences_, whole.differences_)
    np.testing.assert_array_equal(resumed.output_, whole.output_)


def test_a_random_fn_refused_with_a_checkpoint_says_its_runs_are_reused(tmp_path):
    rng = np.random.default_rng(0)
    noisy = DSIMechanism(lambda rows: rows.mean(axis=0) + rng.normal(size=3), epsilon=1, delta=1e-5)
    with pytest.raises(InputError, match="deterministic.*checkpoint .*reused by a rerun"):
        noisy.fit(X, GROUPS, checkpoint=tmp_path / "ck")


def test_a_resume_after_one_full_data_run_still_catches_an_in_place_fn(tmp_path):
    def scale_in_place(rows):
        CALLS.append(len(rows))
        if STOP_AT[0] is not None and len(CALLS) == STOP_AT[0]:
            raise KeyboardInterrupt
        rows *= 2
        return rows.mean(axis=0)

    STOP_AT[0] = 2  # stopped during the second run on the full data: the first is stored
    with pytest.raises(KeyboardInterrupt):
        DSIMechanism(scale_in_place, epsilon=1, delta=1e-5).fit(
            X.copy(), GROUPS, checkpoint=tmp_path / "ck"
        )
    STOP_AT[0] = None
    with pytest.raises(InputError, match="in place"):
        DSIMechanism(scale_in_place, epsilon=1, delta=1e-5).fit(
            X.copy(), GROUPS, checkpoint=tmp_path / "ck"
        )

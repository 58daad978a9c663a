"""The suite's background worker (tests/background_jobs.py): values equal the calls, a job the
worker has not begun runs in the test process, and stopping ends a busy worker."""

import json
import os
import re
import textwrap
import time
from functools import partial

import pytest

import background_helpers
from background_jobs import Background


def test_values_are_the_calls_and_a_job_not_begun_runs_here():
    background = Background()
    slow = (partial(time.sleep, 2), {})
    quick = (textwrap.shorten, {"text": "background jobs of the suite", "width": 15})
    background.start({"slow": slow, "quick": quick})
    try:
        assert "slow" in background.futures and "quick" in background.pending
        # the worker is busy with "slow" for two seconds: "quick" is taken back and run here
        assert background.result("quick", quick) == textwrap.shorten(**quick[1])
        assert "quick" not in background.pending and "quick" not in background.futures
        assert background.result("slow", slow) is None
        # not queued at all (another selection): computed here
        assert background.results({"other": quick}) == {"other": textwrap.shorten(**quick[1])}
        deadline = time.monotonic() + 10  # the worker's job is entered by the future's callback
        while "slow" not in background.ledger and time.monotonic() < deadline:
            time.sleep(0.05)
        line = background.summary()
        assert re.match(r"background jobs: 1 in the worker, busy \d+ s of the session's", line)
        # "other" was never queued; the worker's jobs are named, heaviest first
        assert re.search(
            r"1 taken back \(0 s\): quick 0 s; heaviest in the worker: slow \d+ s$", line
        )
    finally:
        background.stop()


def test_a_wait_for_the_worker_runs_the_jobs_not_begun_here():
    """While the test process waits for the job the worker is running, it runs the jobs the
    worker has not begun (the last first) and keeps their values, or errors, for later."""
    background = Background()
    slow = (partial(time.sleep, 2), {})
    pid = (os.getpid, {})
    broken = (json.loads, {"s": "{"})
    background.start({"slow": slow, "pid": pid, "broken": broken})
    try:
        assert background.result("slow", slow) is None
        assert list(background.stolen) == ["broken", "pid"] and not background.pending
        assert background.result("pid", pid) == os.getpid()  # run here, not in the worker
        with pytest.raises(json.JSONDecodeError):
            background.result("broken", broken)
        assert not background.stolen
        assert background.ledger["pid"][0] == background.ledger["broken"][0] == "here"
    finally:
        background.stop()


def test_stop_ends_a_busy_worker():
    background = Background()
    background.start({"long": (partial(time.sleep, 60), {})})
    assert background.workers and all(p.is_alive() for p in background.workers)
    background.stop()
    deadline = time.monotonic() + 10
    while any(p.is_alive() for p in background.workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(p.is_alive() for p in background.workers)


def test_an_idle_worker_exits_by_itself_and_releases_its_semaphores():
    """A worker whose jobs are done is not terminated: it exits (code 0) and its finalizers
    release the semaphores its jobs made. A terminated worker (code -15) would leave them to the
    resource tracker, which reports them as leaked when the suite ends."""
    background = Background()
    job = (background_helpers.hold_a_semaphore, {})
    background.start({"lock": job})
    try:
        assert background.result("lock", job) == "spawn"
    finally:
        background.stop()
    assert [p.exitcode for p in background.workers] == [0]

"""Long, self-contained computations of test fixtures, started in a second process as soon as the
suite is collected.

The suite runs its tests one after another with numeric libraries on one thread, so one of the
machine's two cores is mostly idle. A test module whose fixtures need such a computation lists it
in a module-level ``BACKGROUND_JOBS`` dict: name -> ``(function, keyword arguments)``, the
function importable by the worker (a ``trustlab`` function, or one in a helper module of
``tests/``). Once collection ends, every selected module's jobs are queued in collection order
for one worker process (spawned: a fresh interpreter; the environment keeps libraries on one
thread), which runs them one by one while the other tests run. A fixture then calls
``background.result(name, job)`` or ``background.results(jobs)`` and gets the worker's return
value: the same call with the same arguments and seeds as in the test process, so the tests
assert on exactly the numbers they would compute themselves. A job the worker has not begun is
taken back and run in the test process at that moment, so a run of one such module keeps both
cores busy and nothing waits on a busy worker. While the test process waits for a job the worker
is running, it runs the last jobs not begun itself (those its tests need last) and keeps their
values for when they are asked for. With ``TRUSTLAB_TEST_BACKGROUND=0`` every job
runs in the test process when its fixture asks.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

Job = tuple[Callable[..., Any], Mapping[str, Any]]


class Background:
    """The session's jobs: those not begun, and the worker's."""

    def __init__(self) -> None:
        self.executor: ProcessPoolExecutor | None = None
        self.pending: dict[str, Job] = {}  # not handed to the worker yet
        self.futures: dict[str, Future] = {}  # handed to the worker
        self.lock = threading.Lock()
        self.workers: list[Any] = []
        self.started = time.monotonic()
        # name -> (where it ran: "worker" or "here", wall seconds), for the session's summary
        self.ledger: dict[str, tuple[str, float]] = {}
        # name -> (finished, value or exception) of jobs run here while waiting for the worker
        self.stolen: dict[str, tuple[bool, Any]] = {}

    def start(self, jobs: Mapping[str, Job]) -> None:
        if not jobs or os.environ.get("TRUSTLAB_TEST_BACKGROUND", "1") == "0":
            return
        self.pending = dict(jobs)
        self.started = time.monotonic()
        before = set(multiprocessing.active_children())
        self.executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        self._hand_over()  # the first job, which also starts the worker
        self.workers = [p for p in multiprocessing.active_children() if p not in before]
        threading.Thread(target=self._feed, name="background-jobs", daemon=True).start()

    def _hand_over(self) -> Future | None:
        """Give the worker the next job not begun (one at a time, so the others stay
        takeable)."""
        with self.lock:
            if not self.pending or self.executor is None:
                return None
            name, (function, kwargs) = next(iter(self.pending.items()))
            try:
                future = self.executor.submit(function, **kwargs)
            except Exception:  # the worker died: what is left runs in the test process
                return None
            del self.pending[name]
            self.futures[name] = future
            begun = time.monotonic()  # one job at a time: it begins when it is handed over
            future.add_done_callback(
                lambda f, name=name: (
                    f.cancelled()
                    or self.ledger.setdefault(name, ("worker", time.monotonic() - begun))
                )
            )
            return future

    def _feed(self) -> None:
        future = next(iter(self.futures.values()))
        while future is not None:
            try:
                future.exception()  # wait until it ends, however it ends
            except Exception:  # cancelled at shutdown
                return
            future = self._hand_over()

    def _take(self, name: str) -> Future | Job | None:
        with self.lock:
            if name in self.pending:
                return self.pending.pop(name)
            return self.futures.pop(name, None)

    def _steal(self) -> bool:
        """Run here the last job not begun (the one the tests need last), keeping its value or
        error for when it is asked for; False when none is left. The test process calls it while
        it waits for a job the worker is running, so the wait does the work the worker would
        have done at the end of its queue."""
        with self.lock:
            if not self.pending:
                return False
            name, (function, kwargs) = self.pending.popitem()
        begun = time.monotonic()
        try:
            self.stolen[name] = (True, function(**kwargs))
        except Exception as exc:  # raised when the job is asked for, as the worker's would be
            self.stolen[name] = (False, exc)
        self.ledger[name] = ("here", time.monotonic() - begun)
        return True

    def result(self, name: str, job: Job) -> Any:
        """The job's value: the worker's, or computed here when the worker has not begun it (or
        it was never queued)."""
        return self.results({name: job})[name]

    def results(self, jobs: Mapping[str, Job]) -> dict[str, Any]:
        """Several jobs' values (name -> value): those the worker has not begun run here, one
        after another, while it works through the others."""
        values, futures = {}, {}
        for name, job in jobs.items():
            if name in self.stolen:  # run here while an earlier wait lasted
                done, value = self.stolen.pop(name)
                if not done:
                    raise value
                values[name] = value
                continue
            taken = self._take(name)
            if isinstance(taken, Future):
                futures[name] = taken
            else:
                function, kwargs = job
                begun = time.monotonic()
                values[name] = function(**kwargs)
                if taken is not None:  # a queued job taken back (not one of another selection)
                    self.ledger[name] = ("here", time.monotonic() - begun)
        for name, future in futures.items():
            while not future.done() and self._steal():
                pass
            values[name] = future.result()
        return {name: values[name] for name in jobs}

    def summary(self) -> str | None:
        """One line on how the worker was used: its jobs and busy seconds against the session's
        (an idle worker means room for more jobs), and the jobs taken back into the test
        process (a busy worker: their time added to the run)."""
        if not self.ledger:
            return None
        session = time.monotonic() - self.started
        worker = {n: t for n, (where, t) in self.ledger.items() if where == "worker"}
        here = {n: t for n, (where, t) in self.ledger.items() if where == "here"}
        line = (
            f"background jobs: {len(worker)} in the worker, busy {sum(worker.values()):.0f} s of "
            f"the session's {session:.0f} s; {len(here)} taken back ({sum(here.values()):.0f} s)"
        )
        if here:
            line += ": " + ", ".join(f"{n} {t:.0f} s" for n, t in here.items())
        heaviest = sorted(worker.items(), key=lambda item: -item[1])[:8]
        if heaviest:  # where to cut when the worker is the bottleneck
            line += "; heaviest in the worker: " + ", ".join(f"{n} {t:.0f} s" for n, t in heaviest)
        return line

    def stop(self) -> None:
        """Drop what is left and end the worker (also after a failure or Ctrl-C)."""
        with self.lock:
            executor, self.executor = self.executor, None
            self.pending.clear()
            busy = any(f.running() for f in self.futures.values())
        if executor is None:
            return
        if not busy:
            # an idle worker exits by itself, running its finalizers, which release the
            # semaphores its jobs made (tqdm's lock, for one): a terminated worker leaves them to
            # the resource tracker, which reports them as leaked at exit. The executor's own
            # thread joins it; joining it here as well would race that thread for the exit
            # status (the loser's waitpid finds no child and reads the process as alive).
            executor.shutdown(wait=True, cancel_futures=True)
            return
        # a worker inside a job is ended
        for process in self.workers:
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)

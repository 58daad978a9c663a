"""Jobs for tests/test_background_jobs.py (importable by the spawned worker)."""

from __future__ import annotations

import multiprocessing

_HELD: list = []


def hold_a_semaphore() -> str:
    """Make a lock that lives as long as the process (as tqdm's is); in a spawned worker it is a
    named semaphore, registered with the resource tracker until a finalizer releases it."""
    _HELD.append(multiprocessing.RLock())
    return multiprocessing.get_start_method()

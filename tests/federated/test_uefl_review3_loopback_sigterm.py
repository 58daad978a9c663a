"""Review 3: a Python process terminated (SIGTERM) during run_loopback stops the SuperLink and
SuperNodes it started. They run in sessions of their own, so before, a test worker ended mid-run
(`pytest -k` of one test in the loopback module) or `timeout` left them running for good."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("flwr")

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def _flower_processes(home: Path) -> list[int]:
    """Processes whose environment points FLWR_HOME at this run's folder."""
    marker = f"FLWR_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.timeout(180)
def test_sigterm_during_a_loopback_run_stops_the_flower_processes(tmp_path):
    script = textwrap.dedent(f"""
        from trustlab.federated import UEFLConfig
        from trustlab.federated.flower_launch import run_loopback
        run_loopback(UEFLConfig(rounds=50, max_iterations=1), n_silos=2,
                     workdir={str(tmp_path)!r}, timeout=600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], env={**os.environ})
    home = tmp_path / "flwr-home"
    try:
        deadline = time.monotonic() + 120
        while len(_flower_processes(home)) < 3:  # the SuperLink and both SuperNodes
            assert child.poll() is None, "run_loopback ended before its processes started"
            assert time.monotonic() < deadline, "the Flower processes did not start"
            time.sleep(0.5)
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
        deadline = time.monotonic() + 20
        while _flower_processes(home) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _flower_processes(home)
    finally:
        if child.poll() is None:
            child.kill()
        for pid in _flower_processes(home):  # never leave them behind, even when the test fails
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert left == []

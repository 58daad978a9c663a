"""bench_equigx.py refuses sizes it cannot run with one argparse line and exit 2 (not a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_equigx.py"


@pytest.mark.parametrize(
    ("option", "value"), [("--graphs", "0"), ("--steps", "0"), ("--l-max", "-1")]
)
def test_bench_equigx_refuses_sizes_below_the_minimum(option, value):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), option, value],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{option}: expected an integer >=" in done.stderr.strip().splitlines()[-1]

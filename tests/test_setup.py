"""The README's two commands on a fresh machine: what the system must provide is installed where it
can be, and otherwise `make` stops before any test with one line saying what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "ensure-system.sh"


def _bin(tmp_path: Path, *, chromium: bool, python: str | None = sys.executable) -> Path:
    """A PATH folder with only what the check may find: python3, and Chromium if asked."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if python is not None:
        (folder / "python3").symlink_to(python)
    if chromium:
        for name in ("chromium", "chromedriver"):
            (folder / name).write_text("#!/bin/sh\nexit 0\n")
            (folder / name).chmod(0o755)
    return folder


def _check(mode: str, folder: Path) -> subprocess.CompletedProcess:
    env = {"PATH": str(folder), "TRUSTLAB_NO_SYSTEM_INSTALL": "1", "HOME": os.environ["HOME"]}
    return subprocess.run(
        ["/bin/sh", str(SCRIPT), mode, "python3"], env=env, capture_output=True, text=True
    )


def test_a_machine_with_everything_passes_silently(tmp_path):
    done = _check("test", _bin(tmp_path, chromium=True))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_without_chromium_make_test_stops_with_one_line(tmp_path):
    done = _check("test", _bin(tmp_path, chromium=False))
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("trustlab setup: the report test needs headless Chromium")
    assert "apt-get install chromium chromium-driver" in lines[0]


def test_the_demo_does_not_need_chromium(tmp_path):
    assert _check("demo", _bin(tmp_path, chromium=False)).returncode == 0


def test_an_old_python_is_named(tmp_path):
    fake = tmp_path / "oldpython"
    fake.write_text("#!/bin/sh\nexit 1\n")  # fails every check, as Python 3.8 would
    fake.chmod(0o755)
    done = _check("demo", _bin(tmp_path, chromium=True, python=str(fake)))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "trustlab setup: 'python3' is older than 3.11: install Python 3.11 or newer "
        "(or run make PYTHON=/path/to/python3.11)"
    ]


def test_no_python_is_named(tmp_path):
    done = _check("demo", _bin(tmp_path, chromium=True, python=None))
    assert done.returncode == 1 and "no 'python3' found" in done.stderr


@pytest.mark.parametrize("target", ["demo", "test"])
def test_both_make_targets_check_the_system_before_the_venv(target):
    plan = subprocess.run(
        ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    checks = [i for i, line in enumerate(plan) if "ensure-system.sh" in line]
    assert checks, plan
    venv = [i for i, line in enumerate(plan) if "-m venv" in line]
    runs = [i for i, line in enumerate(plan) if "pytest" in line or "trustlab audit" in line]
    assert runs and all(c < r for c in checks for r in runs)
    assert all(checks[0] < v for v in venv)
    if target == "test":
        assert any("ensure-system.sh test" in plan[i] for i in checks)


def test_ci_runs_the_readmes_two_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "make demo" in ci and "make test" in ci

"""run_humaneval's sandbox (review 2): what a passing program left running is killed with the
run, and stderr is kept only as its tail, in memory (a program flooding stderr until the
timeout no longer writes gigabytes to the temporary folder)."""

from __future__ import annotations

import time

import pytest

from trustlab.errors import InputError
from trustlab.safety.misuse import run_humaneval


def test_a_passing_programs_children_do_not_outlive_the_run(tmp_path):
    started, survived = tmp_path / "child_started", tmp_path / "child_survived"
    child = (
        f"import time; open({str(started)!r}, 'w').close(); time.sleep(1.0); "
        f"open({str(survived)!r}, 'w').close()"
    )
    program = (
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        f"while not os.path.exists({str(started)!r}):\n"
        "    time.sleep(0.01)\n"
        "def inc(x):\n"
        "    return x + 1\n"
    )
    result = run_humaneval(program, "def check(f):\n    assert f(1) == 2\n", "inc", timeout=10)
    assert result.passed, result.detail
    assert started.exists()  # the child ran during the run ...
    time.sleep(2.0)  # ... and would have written its file by now
    assert not survived.exists()


def test_stderr_is_not_written_to_a_file_and_its_last_line_is_the_detail(monkeypatch):
    opened = []
    real_open = open

    def spy(file, mode="r", *args, **kwargs):
        opened.append((str(file), mode))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy)
    program = (
        "import sys\n"
        "def f():\n"
        "    for _ in range(2000):\n"
        "        sys.stderr.write('x' * 1000 + '\\n')\n"
        "    raise ValueError('boom')\n"
    )
    result = run_humaneval(program, "def check(c):\n    c()\n", "f")
    assert (result.status, result.detail) == ("failed", "ValueError: boom")
    assert not [path for path, mode in opened if "w" in mode or "a" in mode]


GREEDY = (
    "def grab():\n"
    "    chunks = []\n"
    "    for _ in range(12):\n"
    "        chunks.append(bytearray(50_000_000))\n"  # 600 MB in all
    "    return len(chunks)\n"
)
TEST = "def check(f):\n    assert f() == 12\n"


def test_a_program_past_max_memory_fails_with_a_memory_error():
    # a runaway answer (s += s in a loop) had the whole machine's memory to take
    capped = run_humaneval(GREEDY, TEST, "grab", timeout=30, max_memory=256 * 2**20)
    assert not capped.passed and capped.status == "failed"
    assert "MemoryError" in capped.detail
    assert run_humaneval(GREEDY, TEST, "grab", timeout=30, max_memory=None).passed  # the control


def test_max_memory_is_checked():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="max_memory: expected an integer >= 1"):
            run_humaneval(GREEDY, TEST, "grab", max_memory=bad)


WRITER = (
    "def write():\n"
    "    with open('big.bin', 'wb') as file:\n"
    "        for _ in range(8):\n"
    "            file.write(bytes(1_000_000))\n"  # 8 MB in all
    "    return 1\n"
)


def test_a_program_writing_past_max_file_size_fails_with_file_too_large():
    # an answer writing in a loop could fill the disk within its timeout
    test = "def check(f):\n    assert f() == 1\n"
    capped = run_humaneval(WRITER, test, "write", timeout=30, max_file_size=2_000_000)
    assert not capped.passed and capped.status == "failed"
    assert "File too large" in capped.detail  # OSError, not a process killed by SIGXFSZ
    assert run_humaneval(WRITER, test, "write", timeout=30, max_file_size=None).passed
    assert run_humaneval(WRITER, test, "write", timeout=30).passed  # 64 MiB by default
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="max_file_size: expected an integer >= 1"):
            run_humaneval(WRITER, test, "write", max_file_size=bad)

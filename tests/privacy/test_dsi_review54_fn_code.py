"""DSIMechanism.fit checkpoint (review pass 54): two functions of one name (an ``fn`` redefined
in a notebook) were not told apart, so a rerun with the new ``fn`` resumed the old one's runs
and mixed two functions' outputs in the differences. The header now holds a hash of fn's code
(not of its file or line) with its defaults and closure values."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.random.default_rng(0).normal(size=(24, 2))
GROUPS = np.arange(24) % 6

SOURCE_MEAN = "def fn(rows):\n    return rows.mean(axis=0)\n"
SOURCE_SCALED = "def fn(rows):\n    return 2.0 * rows.mean(axis=0)\n"


def define(source: str, filename: str, **scope):
    """``fn`` defined from ``source`` as a notebook cell would (its own file name)."""
    namespace = dict(scope)
    exec(compile("\n" * len(filename) + source, filename, "exec"), namespace)
    return namespace["fn"]


def fit(fn, folder):
    return DSIMechanism(fn, epsilon=1.0, delta=1e-5).fit(X, GROUPS, checkpoint=folder)


def test_an_fn_of_the_same_name_with_other_code_is_refused(tmp_path):
    fit(define(SOURCE_MEAN, "<cell 1>"), tmp_path / "ck")
    with pytest.raises(InputError, match=r"^checkpoint: .*\(fn's code differ\)"):
        fit(define(SOURCE_SCALED, "<cell 2>"), tmp_path / "ck")


def test_the_same_code_rerun_in_another_cell_resumes(tmp_path):
    first = fit(define(SOURCE_MEAN, "<cell 1>"), tmp_path / "ck")
    again = fit(define(SOURCE_MEAN, "<a later cell>"), tmp_path / "ck")
    np.testing.assert_array_equal(again.differences_, first.differences_)


def test_closure_values_are_told_apart(tmp_path):
    def make(scale):
        def fn(rows):
            return scale * rows.mean(axis=0)

        return fn

    fit(make(1.0), tmp_path / "ck")
    fit(make(1.0), tmp_path / "ck")  # the same value: resumed
    with pytest.raises(InputError, match=r"fn's code differ"):
        fit(make(3.0), tmp_path / "ck")


HASH_IN_A_PROCESS = (
    "from trustlab.privacy.mechanism import _code_hash\n"
    "def fn(rows):\n    return rows if rows in {'a', 'b', 'c', 'd'} else None\n"
    "print(_code_hash(fn))\n"
)


def test_the_code_hash_is_the_same_in_another_process():
    hashes = {
        subprocess.run(
            [sys.executable, "-c", HASH_IN_A_PROCESS],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(hashes) == 1 and len(hashes.pop().strip()) == 64

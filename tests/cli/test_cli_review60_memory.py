"""Out of memory in a command: one line naming the option to shrink, exit 1 (review 60).

``fairness dcp --greedy-attempts 100000000`` and ``evaluate rank --n-bootstrap 10000000000000``
ended in "trustlab: unexpected failure: MemoryError: Unable to allocate ..." (exit 1)."""

from __future__ import annotations

import numpy as np
import pytest

import trustlab.evaluation
from cli_helpers import run_main


def _fail(*args, **kwargs):
    raise MemoryError("Unable to allocate 146. TiB for an array with shape (10000000000000, 2)")


@pytest.fixture
def predictions(tmp_path, monkeypatch):
    monkeypatch.setattr(trustlab.evaluation, "rank_models", _fail)
    rng = np.random.default_rng(0)
    paths = []
    for name in "ab":
        np.save(tmp_path / f"{name}.npy", rng.dirichlet(np.ones(3), 8))
        paths.append(tmp_path / f"{name}.npy")
    return paths


@pytest.mark.parametrize(
    "written", [["--n-bootstrap", "10000000000000"], ["--n-bootstrap=10000000000000"]]
)
def test_out_of_memory_names_the_largest_numeric_option(capsys, predictions, written):
    args = ["evaluate", "rank", "-p", *predictions, "--seed", "99999999999999", *written]
    code, _, err = run_main(args, capsys)
    given = written[-1].split("=")[-1]
    assert code == 1
    assert err == (
        "trustlab: failed: out of memory (Unable to allocate 146. TiB for an array with shape "
        f"(10000000000000, 2)); try a smaller --n-bootstrap (given {given}) or a machine with "
        "more memory\n"
    )


def test_out_of_memory_without_a_numeric_option_names_the_input(capsys, predictions):
    code, _, err = run_main(["evaluate", "rank", "-p", *predictions], capsys)
    assert code == 1
    assert err.startswith("trustlab: failed: out of memory (Unable to allocate 146. TiB")
    assert err.endswith("; the input may be too large for this machine's memory\n")
    assert err.count("\n") == 1

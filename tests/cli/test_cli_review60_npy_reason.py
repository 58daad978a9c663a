"""A file named .npy that is not one is refused with a reason a CLI user can act on (review 60).

numpy says of any file without a NumPy header (a CSV named .npy, random bytes) "This file
contains pickled (object) data. If you trust the file you can load it unsafely using the
`allow_pickle=` keyword argument or `pickle.load()`": wrong about a CSV, and no option of the
command can do what it suggests."""

from __future__ import annotations

import numpy as np
import pytest

from cli_helpers import run_main
from trustlab.cli.privacy import read_array
from trustlab.errors import InputError

NOT_NPY = "it is not a NumPy .npy/.npz file (it lacks the NumPy header; pickles are not read)"


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    for name in "ab":
        np.save(tmp_path / f"{name}.npy", rng.dirichlet(np.ones(3), 6))
    (tmp_path / "table.npy").write_text("label\n0\n1\n2\n0\n1\n2\n")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return tmp_path


def test_evaluate_rank_names_a_csv_named_npy(capsys, files):
    rank = ["evaluate", "rank", "-p", files / "a.npy", files / "b.npy", "--n-bootstrap", "0"]
    code, _, err = run_main([*rank, "--labels", files / "table.npy"], capsys)
    assert (code, err) == (2, f"trustlab: error: --labels: could not read {files / 'table.npy'}: "
                              f"{NOT_NPY}\n")  # fmt: skip
    code, _, err = run_main([*rank, "--labels", files / "objects.npy"], capsys)
    assert code == 2
    assert err.endswith(
        "it holds Python objects (an object array), not numbers; pickles are not read\n"
    )
    assert "allow_pickle" not in err


def test_privacy_reads_say_the_same(files):
    with pytest.raises(InputError) as caught:
        read_array(files / "table.npy", "--deltas")
    assert str(caught.value) == f"--deltas: could not read {files / 'table.npy'}: {NOT_NPY}"

"""Empty or truncated .npz files in federated (the class of 0434bfe and 35b1da3, review 54d): a
Flower node's data-path file (load_silo_file) and a simulate_uefl checkpoint's arrays file cut
short raised numpy's bare EOFError ('No data left in file') or zipfile's BadZipFile instead of
the InputError naming the argument that their other unreadable files get."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.federated._checkpoint import Checkpoint  # noqa: E402
from trustlab.federated.silos import load_silo_file  # noqa: E402


def _silo_file(path):
    rows = np.zeros((4, 2))
    np.savez(path, X_train=rows, y_train=np.zeros(4), X_test=rows, y_test=np.zeros(4))
    return path.read_bytes()


@pytest.mark.parametrize("kept", [0, 0.5], ids=["empty", "cut-short"])
def test_a_data_path_file_cut_short_is_an_input_error(tmp_path, kept):
    path = tmp_path / "node.npz"
    whole = _silo_file(path)
    path.write_bytes(whole[: int(kept * len(whole))])
    with pytest.raises(InputError, match=r"^data-path: expected an \.npz file") as info:
        load_silo_file(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("kept", [0, 0.5], ids=["empty", "cut-short"])
def test_a_checkpoint_whose_arrays_file_is_cut_short_is_an_input_error(tmp_path, kept):
    whole = _silo_file(tmp_path / "checkpoint-1.npz")
    (tmp_path / "checkpoint-1.npz").write_bytes(whole[: int(kept * len(whole))])
    meta = {"version": 1, "fingerprint": "f", "generation": 1, "completed": {}, "current": None,
            "arrays": "checkpoint-1.npz"}  # fmt: skip
    (tmp_path / "checkpoint.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"^checkpoint: expected a readable checkpoint"):
        Checkpoint(tmp_path, "f", ("fedavg",))

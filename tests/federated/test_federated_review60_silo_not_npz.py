"""A Flower node's data-path file that is not an .npz (diff review 60 A of d9e16c92).

``load_silo_file`` passed on numpy's "This file contains pickled (object) data. If you trust the
file you can load it unsafely using the `allow_pickle=` keyword argument" for a CSV named .npz:
wrong about a CSV, and nothing a node's config holds can do it. It now says what the CLI's
readers say (``trustlab._checks.npy_reason``), in full (the reason was cut short after a long
path)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.federated.silos import load_silo_file


def test_a_csv_named_npz_is_refused_without_the_pickle_advice(tmp_path):
    path = tmp_path / "node.npz"
    path.write_text("X_train,y_train\n1,0\n2,1\n")
    with pytest.raises(InputError) as info:
        load_silo_file(path)
    assert str(info.value) == (
        "data-path: expected an .npz file with X_train, y_train, X_test, y_test, got "
        f"{path}: it is not a NumPy .npy/.npz file (it lacks the NumPy header; pickles are "
        "not read)"
    )

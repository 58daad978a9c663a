"""Review 57: boolean labels for a 2-column model were refused ("labels: expected class indices
0..1 ..., got dtype bool"; the CLI: "--labels[0]: expected a class index ..., got False") though
classes=[False, True] worked. They are columns 0/1, as sklearn orders its classes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import rank_models

RNG = np.random.default_rng(57)
Y = RNG.random(30) < 0.5
OUTPUTS = {
    name: np.column_stack([1 - p, p])
    for name, p in (("a", np.where(Y, 0.7, 0.4)), ("b", RNG.uniform(0.05, 0.95, 30)))
}


def test_bool_labels_of_a_two_column_model_are_columns_0_and_1():
    by_index = rank_models(OUTPUTS, labels=Y.astype(int), n_bootstrap=0)
    for labels in (Y, Y.tolist()):
        res = rank_models(OUTPUTS, labels=labels, n_bootstrap=0)
        assert res.to_dict() == by_index.to_dict()
    assert res.accuracy.tolist() == [1.0, by_index.accuracy[1]]


def test_bool_labels_of_a_three_column_model_are_refused_by_name():
    three = {"a": np.full((30, 3), 1 / 3), "b": np.full((30, 3), 1 / 3)}
    with pytest.raises(InputError, match=r"^labels: expected class indices 0\.\.2 \(booleans"):
        rank_models(three, labels=Y, n_bootstrap=0)


def test_cli_reads_a_npy_of_booleans_as_the_classes_0_and_1(run, tmp_path):
    paths = []
    for name, probs in OUTPUTS.items():
        np.save(tmp_path / f"{name}.npy", probs)
        paths.append(tmp_path / f"{name}.npy")
    np.save(tmp_path / "y_bool.npy", Y)
    np.save(tmp_path / "y_int.npy", Y.astype(int))
    args = ["evaluate", "rank", "--json", "--n-bootstrap", 0, "-p", *paths, "--labels"]
    code, out, err = run(*args, tmp_path / "y_bool.npy")
    assert code == 0, err
    assert json.loads(out) == json.loads(run(*args, tmp_path / "y_int.npy")[1])

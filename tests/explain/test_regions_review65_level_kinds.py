"""A fixed sparsity level given as a 0-d array or tensor or a numpy int (review 65):
RegionSparseClassifier(tau=...) and explain(tau=...) took 0.3, 1 and np.float32(0.3) but refused
np.array(0.3) and torch.tensor(0.3) with 'tau: expected a sparsity level in (0, 1], got 0.3', and
np.int64(1), while delta takes them (2379797c). Now they are those numbers, saved as plain
numbers; bools of any kind are still refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import RegionSparseClassifier  # noqa: E402


@pytest.mark.parametrize(
    ("tau", "want"),
    [(np.array(0.3), 0.3), (torch.tensor(0.25), 0.25), (np.int64(1), 1.0), (0.3, 0.3)],
)
def test_zero_d_and_numpy_levels_are_numbers(tau, want):
    model = RegionSparseClassifier(tau=tau)
    assert model._check_params()["tau"] == want
    saved = json.loads(json.dumps(model._model_params()))  # model.json: plain numbers
    assert saved["tau"] == want


@pytest.mark.parametrize("tau", [np.array(True), torch.tensor(True), np.True_, np.array(1.5)])
def test_bools_and_out_of_range_still_refused(tau):
    with pytest.raises(InputError) as info:
        RegionSparseClassifier(tau=tau)._check_params()
    assert info.value.argument == "tau"

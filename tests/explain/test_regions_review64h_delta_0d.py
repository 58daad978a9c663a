"""A certainty threshold given as a 0-d array or tensor of a bool or a string (diff review 64 H of
d7d4c10d): delta=True and np.True_ were refused but np.array(True) and torch.tensor(True) were
still read as 1.0 (explain gave tau 1.0 for every image) and np.array("0.5") as 0.5. Now refused
naming delta; a 0-d float array or tensor is still a number."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import RegionSparseClassifier, dynamic_tau  # noqa: E402


def _select(x, s, tau):
    return tau.view(-1, 1) * 4 - torch.arange(2.0) - 0.5


def _classify(x):
    return torch.stack([x.mean((1, 2, 3)) * 8, torch.zeros(len(x))], 1)


_SEG = torch.arange(2).repeat_interleave(2).view(1, 2, 2)


@pytest.mark.parametrize(
    "delta", [np.array(True), torch.tensor(True), np.array("0.5"), [0.9, np.array(True)]]
)
def test_zero_d_bool_or_string_delta_is_refused(delta):
    with pytest.raises(InputError) as info:
        dynamic_tau(_select, _classify, torch.ones(1, 1, 2, 2), _SEG, delta=delta)
    assert info.value.argument == "delta"
    with pytest.raises(InputError) as info:
        RegionSparseClassifier(delta=delta)._check_params()
    assert info.value.argument == "delta"


@pytest.mark.parametrize("delta", [np.array(0.9), torch.tensor(0.9), np.float32(0.9)])
def test_zero_d_numbers_still_accepted(delta):
    r = dynamic_tau(_select, _classify, torch.ones(1, 1, 2, 2), _SEG, delta=delta)
    assert r.tau.tolist() == [0.15]  # half kept: sigmoid(4) = 0.982, as in the review64 test

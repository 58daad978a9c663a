"""A certainty threshold given as a bool or a string (review 64): delta=True was read as 1.0 and
delta="0.5" as 0.5 (explain, the estimator's parameter, dynamic_tau); both are refused naming
delta, like any other value that is not a number in (0, 1]."""

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


@pytest.mark.parametrize("delta", [True, np.True_, "0.5", [0.9, "0.99"], b"1"])
def test_bool_or_string_delta_is_refused(delta):
    seg = torch.arange(2).repeat_interleave(2).view(1, 2, 2)
    with pytest.raises(InputError) as info:
        dynamic_tau(_select, _classify, torch.ones(1, 1, 2, 2), seg, delta=delta)
    assert info.value.argument == "delta"
    with pytest.raises(InputError) as info:
        RegionSparseClassifier(delta=delta)._check_params()
    assert info.value.argument == "delta"


def test_numbers_still_accepted():
    seg = torch.arange(2).repeat_interleave(2).view(1, 2, 2)
    r = dynamic_tau(_select, _classify, torch.ones(1, 1, 2, 2), seg, delta=np.float32(0.9))
    assert r.tau.tolist() == [0.15]  # half kept: sigmoid(4) = 0.982

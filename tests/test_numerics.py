"""Subnormal floats: the flush mode is set inside the block and restored, and subnormal weights
are zeroed without changing a network's outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab._numerics import flush_denormals, zero_denormals

TINY = torch.finfo(torch.float32).tiny


def _flushes() -> bool:
    return float(torch.tensor(TINY) / 4) == 0.0


def test_flush_denormals_sets_and_restores_the_mode():
    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU cannot flush subnormal floats")
    assert not _flushes()
    with flush_denormals():
        assert _flushes()
    assert not _flushes()
    torch.set_flush_denormal(True)  # a caller's own setting is kept
    try:
        with flush_denormals():
            assert _flushes()
        assert _flushes()
    finally:
        torch.set_flush_denormal(False)


def test_flush_denormals_restores_the_mode_after_an_error():
    with pytest.raises(RuntimeError), flush_denormals():
        raise RuntimeError("boom")
    assert not _flushes()


def test_zero_denormals_zeroes_only_subnormal_weights_and_keeps_the_outputs():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.BatchNorm1d(5))
    net.eval()
    with torch.no_grad():
        w = net[0].weight
        w[0, :3] = torch.tensor([TINY / 2, -TINY / 8, TINY * 3])  # two subnormal, one normal
        net[1].running_mean[1] = TINY / 16
    before = {k: v.clone() for k, v in net.state_dict().items()}
    x = torch.randn(4, 6)
    y0 = net(x)
    assert zero_denormals(net) == 3
    after = net.state_dict()
    assert after["0.weight"][0, 0] == 0 and after["0.weight"][0, 1] == 0
    assert after["0.weight"][0, 2] == before["0.weight"][0, 2]
    assert after["1.running_mean"][1] == 0
    changed = sum(
        int((after[k] != before[k]).sum()) for k in before if before[k].is_floating_point()
    )
    assert changed == 3
    np.testing.assert_allclose(net(x).detach().numpy(), y0.detach().numpy(), rtol=0, atol=1e-30)
    assert zero_denormals(net) == 0

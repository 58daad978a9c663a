"""A sparsity level for the selector given as a numpy or 0-d number (review 65): Selector.select
and Selector(x, tau) took a Python float but refused np.float32(0.3), np.int64(1), np.array(0.3)
and torch.tensor(0.3) ('expected a 1-D tensor'), which RegionSparseClassifier(tau=...) accepts.
Now any real scalar is broadcast to every image; a bool of any kind is refused naming tau."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.models import Selector  # noqa: E402


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    x = torch.rand(2, 3, 4, 4)
    seg = torch.zeros(2, 4, 4, dtype=torch.long)
    seg[:, :2] = 1
    return Selector(widths=(4, 8)).eval(), x, seg


@pytest.mark.parametrize(
    "tau", [np.float32(0.25), np.array(0.25), torch.tensor(0.25), np.float16(0.25)]
)
def test_numpy_and_zero_d_levels_are_the_float(net, tau):
    sel, x, seg = net
    with torch.no_grad():
        want = sel.select(x, seg, 0.25)[0]  # 0.25 is exact in float16 and float32
        assert torch.equal(sel.select(x, seg, tau)[0], want)
        assert torch.equal(sel(x, tau)[0], sel(x, 0.25)[0])
        assert torch.equal(sel.select(x, seg, np.int64(1))[0], sel.select(x, seg, 1.0)[0])


@pytest.mark.parametrize("tau", [True, np.True_, np.array(True), torch.tensor(True)])
def test_bool_levels_are_refused(net, tau):
    sel, x, seg = net
    with pytest.raises(InputError) as info:
        sel.select(x, seg, tau)
    assert info.value.argument == "tau"

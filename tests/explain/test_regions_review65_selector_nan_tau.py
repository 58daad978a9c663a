"""A NaN or infinite sparsity level for the selector (review 65): Selector.select, Selector(x, tau)
and select_levels took tau=nan or inf (a number, or one entry of a per-image tensor or of the
levels) and returned NaN group logits for those images, so no group was selected, silently.
Now refused naming tau / taus; finite levels (0 and beyond 1 included, the selector's affine
tau) are unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions.models import Selector  # noqa: E402


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    seg = torch.zeros(2, 4, 4, dtype=torch.long)
    seg[:, :2] = 1
    return Selector(widths=(4, 8)).eval(), torch.rand(2, 3, 4, 4), seg


@pytest.mark.parametrize(
    "tau", [math.nan, math.inf, np.float32("nan"), torch.tensor([0.3, math.nan])]
)
def test_non_finite_tau_is_refused(net, tau):
    sel, x, seg = net
    with pytest.raises(InputError) as info:
        sel.select(x, seg, tau)
    assert info.value.argument == "tau"
    with pytest.raises(InputError) as info:
        sel(x, tau)
    assert info.value.argument == "tau"


def test_non_finite_levels_are_refused_and_finite_ones_kept(net):
    sel, x, seg = net
    with pytest.raises(InputError) as info:
        sel.select_levels(x, seg, [0.3, math.nan])
    assert info.value.argument == "taus"
    with torch.no_grad():
        levels = sel.select_levels(x, seg, [0.0, 1.5])
        assert torch.isfinite(levels).all()
        assert torch.allclose(levels[:, 1], sel.select(x, seg, 1.5)[0], atol=1e-5)

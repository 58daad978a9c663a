"""NaN or infinite images given to dynamic tau and the fidelity curves (review 64): dynamic_tau
with one NaN pixel returned tau 1.0, certain False, confidence NaN without a word (NaN logits
never reach delta); deletion_curve on NaN images reported agreement 1.0 at every level (argmax
of NaN logits is 0 for masked and unmasked alike). A fidelity level given as the string "0.2" or
True was read as a number. Each is now an InputError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    deletion_curve,
    dynamic_tau,
    dynamic_tau_sequential,
    insertion_curve,
)

SEG = torch.arange(4).repeat_interleave(4).view(1, 4, 4)


def _select(x, s, tau):
    return tau.view(-1, 1) * 4 - torch.arange(4.0) - 0.5


def _classify(x):
    return torch.stack([x.mean((1, 2, 3)) * 8, torch.zeros(len(x))], 1)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_dynamic_tau_refuses_non_finite_images(bad):
    x = torch.ones(1, 1, 4, 4)
    x[0, 0, 0, 0] = bad
    for fn in (dynamic_tau, dynamic_tau_sequential):
        with pytest.raises(InputError) as info:
            fn(_select, _classify, x, SEG, 0.9)
        assert info.value.argument == "images"


@pytest.mark.parametrize("fn", [deletion_curve, insertion_curve])
def test_fidelity_refuses_non_finite_images_and_non_numeric_levels(fn):
    x = np.ones((1, 1, 4, 4), dtype=np.float32)
    scores = [[0.9, 0.1, 0.2, 0.3]]
    name = "fractions" if fn is deletion_curve else "kept"
    for levels in ("0.2", (True,), ["0.5"]):
        with pytest.raises(InputError) as info:
            fn(_classify, x, SEG.numpy(), scores, levels)
        assert info.value.argument == name
    x[0, 0, 3, 3] = np.nan
    with pytest.raises(InputError) as info:
        fn(_classify, x, SEG.numpy(), scores, (0.5,))
    assert info.value.argument == "images"
    assert fn(_classify, np.ones_like(x), SEG.numpy(), scores, np.array([0.5])).n_images == 1

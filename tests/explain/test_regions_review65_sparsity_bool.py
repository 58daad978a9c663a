"""A bool tensor or array as the sparsity level of kl_sparsity / l1_sparsity (review 65): True and
np.True_ were refused but torch.tensor(True), np.array(True) and torch.tensor([True, True]) were
read as tau 1.0 (loss 0.0 for any p_bar). Now refused naming tau; numbers are unchanged."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import kl_sparsity, l1_sparsity  # noqa: E402

_P = torch.tensor([0.5, 0.9], dtype=torch.float64)


@pytest.mark.parametrize("fn", [kl_sparsity, l1_sparsity])
@pytest.mark.parametrize(
    "tau", [torch.tensor(True), np.array(True), torch.tensor([True, True]), np.array([True, True])]
)
def test_bool_tensor_levels_are_refused(fn, tau):
    with pytest.raises(InputError) as info:
        fn(_P, tau)
    assert info.value.argument == "tau"


def test_numbers_unchanged():
    # float64 p_bar: 0.3 stays 0.3 in float64 (not rounded through float32)
    assert l1_sparsity(_P, 0.3).tolist() == [0.5 - 0.3, 0.9 - 0.3]
    assert l1_sparsity(_P, torch.tensor([1.0, 0.5])).tolist() == [0.0, 0.9 - 0.5]
    assert kl_sparsity(_P, np.float32(1.0)).tolist() == [0.0, 0.0]

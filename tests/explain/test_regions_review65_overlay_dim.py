"""RegionExplanation.overlay(dim=...) beyond 1 (review 65): dim=5 was accepted and brightened the
unselected pixels (0.5 -> 1.0 after the clip) above the selected ones (0.5), the reverse of the
dimming the docstring promises. Now dim must be in (0, 1], refused naming dim otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.regions.results import RegionExplanation


def _explanation():
    mask = np.zeros((1, 2, 2), dtype=bool)
    mask[0, 0] = True
    seg = np.array([[[0, 0], [1, 1]]])
    z = np.zeros(1)
    return RegionExplanation(
        mode="fixed", delta=None, class_names=("a",), prediction=np.zeros(1, dtype=int),
        confidence=z + 1, tau=z + 0.5, certain=np.ones(1, dtype=bool), kept_fraction=z + 0.5,
        probabilities=np.ones((1, 1)), group_mask=np.array([[True, False]]),
        scores=np.zeros((1, 2)), mask=mask, soft_map=mask * 1.0, segments=seg,
        images=np.full((1, 3, 2, 2), 0.5),
    )  # fmt: skip


@pytest.mark.parametrize("dim", [5, 1.5, np.inf, 0, -0.5])
def test_dim_outside_zero_one_is_refused(dim):
    with pytest.raises(InputError) as info:
        _explanation().overlay(0, dim=dim)
    assert info.value.argument == "dim"


def test_dim_in_range_dims():
    ov = _explanation().overlay(0, dim=0.25)
    assert ov[1].tolist() == [[0.125] * 3] * 2  # unselected row: 0.5 * 0.25
    assert _explanation().overlay(0, dim=1)[1].tolist() == [[0.5] * 3] * 2

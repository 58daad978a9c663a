"""The hard mask at a group logit of exactly 0 (review 64): the spec's m = 1[sigmoid(mu) > 0.5]
keeps no group whose probability is exactly 0.5. No test held mu = 0: hard_selection with
``mu >= 0`` passed the regions selection, models and ties tests (mutation measured, 36 passed)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from trustlab.explain.regions import hard_selection  # noqa: E402


def test_a_logit_of_zero_is_not_selected():
    for dtype in (torch.float32, torch.float64):
        mu = torch.tensor([[0.0, -0.0, 1e-30, -1e-30, 2.0]], dtype=dtype)
        assert hard_selection(mu).tolist() == [[False, False, True, False, True]]

"""ActivationMap on 3-14 rows: the 10 % hold-out kept one row out, so its FVU was NaN."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.transfer import ActivationMap


def _pair(n, seed=0):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(n, 4))
    return S, S @ rng.normal(size=(4, 3)) + 0.1 * rng.normal(size=(n, 3))


@pytest.mark.parametrize("n", [3, 5, 10, 14])
def test_a_few_rows_hold_out_two_and_report_a_finite_fvu(n):
    S, T = _pair(n)
    fit = ActivationMap(kind="affine", random_state=0).fit(S, T).fit_
    assert fit.n_held_out == 2
    assert np.isfinite(fit.held_out_fvu) and "held-out FVU nan" not in fit.summary()


def test_two_rows_cannot_hold_two_out():
    with pytest.raises(InputError, match=r"source: expected at least 3 rows"):
        ActivationMap(kind="affine").fit(*_pair(2))
    fit = ActivationMap(kind="affine", validation_fraction=0).fit(*_pair(2)).fit_
    assert fit.n_held_out == 0

"""Review 55: what DSIMechanism.fit says about an fn without ``return`` and about a checkpoint
file that is not a stored run."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism

X = np.arange(12.0).reshape(6, 2)
GROUPS = [0, 0, 1, 1, 2, 2]


def forgot_return(rows):
    rows.mean(axis=0)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_an_fn_returning_none_is_named_not_reported_as_nan(tmp_path, checkpoint):
    # it said "fn(data): expected finite values, got nan at index ()"
    mech = DSIMechanism(forgot_return, epsilon=1.0, delta=1e-5)
    folder = tmp_path / "runs" if checkpoint else None
    with pytest.raises(InputError, match=r"fn\(data\): .*returned None: a missing return"):
        mech.fit(X, GROUPS, checkpoint=folder)

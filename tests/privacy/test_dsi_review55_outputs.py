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


def mean(rows):
    return rows.mean(axis=0)


@pytest.mark.parametrize("content", [b"garbage", b""])
def test_an_unreadable_run_file_is_refused_naming_it(tmp_path, content):
    # it raised numpy's ValueError ("contains pickled (object) data ... load it unsafely") or
    # EOFError, naming neither the checkpoint nor the file
    folder = tmp_path / "runs"
    DSIMechanism(mean, epsilon=1.0, delta=1e-5).fit(X, GROUPS, checkpoint=folder)
    (folder / "run_3.npy").write_bytes(content)
    with pytest.raises(InputError, match=r"checkpoint: could not read .*run_3\.npy.*delete"):
        DSIMechanism(mean, epsilon=1.0, delta=1e-5).fit(X, GROUPS, checkpoint=folder)
    (folder / "run_3.npy").unlink()  # as the message says: that run is repeated
    mech = DSIMechanism(mean, epsilon=1.0, delta=1e-5).fit(X, GROUPS, checkpoint=folder)
    assert np.allclose(mech.differences_[1], X.mean(axis=0) - X[[0, 1, 4, 5]].mean(axis=0))

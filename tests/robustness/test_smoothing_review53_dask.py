"""Review pass 53: a Dask scheduler address that is malformed or does not answer."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import SmoothedClassifier, certify_dataset


def _sign(batch):
    return (batch[:, 0] > 0).astype(int)


def test_a_bad_scheduler_address_is_refused_before_fresh_deletes_the_checkpoint(tmp_path):
    """The connection failed with a bare ValueError/OSError after fresh=True had deleted the
    checkpoint (and the CLI the results): a typo in the address lost a finished run."""
    smooth = SmoothedClassifier(_sign, 0.5, 2)
    X, y = np.array([[1.0], [-0.5]]), [1, 0]
    checkpoint = tmp_path / "run.jsonl"
    first = certify_dataset(
        smooth, X, y, n0=10, n=100, random_state=0, checkpoint=checkpoint, model_id="sign"
    )
    kept = checkpoint.read_bytes()
    with pytest.raises(InputError, match=r"^dask_scheduler: expected the address of a running"):
        certify_dataset(
            smooth, X, y, n0=10, n=100, random_state=0, checkpoint=checkpoint, model_id="sign",
            dask_scheduler="no-port-here", fresh=True,
        )  # fmt: skip
    assert checkpoint.read_bytes() == kept
    again = certify_dataset(
        smooth, X, y, n0=10, n=100, random_state=0, checkpoint=checkpoint, model_id="sign"
    )
    assert again.counts.tolist() == first.counts.tolist()


def test_a_blank_address_is_refused_and_a_cluster_object_still_works():
    from dask.distributed import LocalCluster

    smooth = SmoothedClassifier(_sign, 0.5, 2)
    with pytest.raises(InputError, match=r"^dask_scheduler: expected the address"):
        certify_dataset(smooth, [[1.0]], [1], n0=10, n=100, dask_scheduler="  ")
    plain = certify_dataset(smooth, [[1.0]], [1], n0=10, n=100, random_state=0)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster:
        on_dask = certify_dataset(
            smooth, [[1.0]], [1], n0=10, n=100, random_state=0, dask_scheduler=cluster
        )
    assert on_dask.counts.tolist() == plain.counts.tolist()

"""Review 61: simulate_uefl's progress, baselines and checkpoint reached Python unchecked.
progress="x" was called only after the checkpoint was opened, so with fresh=True it deleted the
checkpoint and then failed with "TypeError: 'str' object is not callable"; baselines=None or 5
was "object is not iterable" and checkpoint=5 "expected str, bytes or os.PathLike object"."""

import pytest

from trustlab.errors import InputError
from trustlab.federated import simulate_uefl

TINY = dict(n_silos=2, rounds=1, rounds_plus=1, local_epochs=1, mc_passes=2, max_iterations=1)


def test_a_progress_that_is_not_callable_is_refused_before_the_checkpoint_is_deleted(tmp_path):
    (tmp_path / "checkpoint.json").write_text("{}")
    with pytest.raises(InputError, match=r"^progress: expected a callable, got 'x'"):
        simulate_uefl(checkpoint=tmp_path, fresh=True, progress="x", **TINY)
    assert (tmp_path / "checkpoint.json").read_text() == "{}"


@pytest.mark.parametrize("baselines", [None, 5])
def test_baselines_that_are_not_names_are_refused_by_name(baselines):
    with pytest.raises(InputError, match=r"^baselines: expected 'fedavg' and/or 'vq'"):
        simulate_uefl(baselines=baselines, **TINY)


def test_a_checkpoint_that_is_not_a_path_is_refused_by_name():
    with pytest.raises(InputError, match=r"^checkpoint: expected a directory path, got 5"):
        simulate_uefl(checkpoint=5, **TINY)

"""run_loopback's 40-node cap holds for numpy integers too (diff review 65 M of 36350781).

The cap tested ``isinstance(n_silos, int)``: np.int64(41), which every other n_silos check takes,
went past it and started a SuperLink and 41 SuperNodes whose digit silos all failed. No Flower
process starts here: ``_start`` is replaced by one that fails the test.
"""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import flower_launch


def _no_process(*args, **kwargs):
    raise AssertionError(f"a Flower process was started: {args[0][0]}")


@pytest.mark.parametrize("n_silos", [np.int64(41), np.int32(100)])
def test_a_numpy_silo_count_above_40_is_refused_before_any_process(n_silos, tmp_path, monkeypatch):
    monkeypatch.setattr(flower_launch, "_start", _no_process)
    with pytest.raises(InputError, match="^n_silos: expected at most 40 SuperNodes"):
        flower_launch.run_loopback(n_silos=n_silos, workdir=tmp_path / "w")
    assert not (tmp_path / "w").exists()

"""Review 65: the misuse task's random_state is an integer seed, as its docstring and the
neutrality tasks say: ``-T random_state=null`` drew an unseeded sample, different on every run
(text/11 + text/3, then text/11 + text/2) and on resuming an interrupted run."""

import numpy as np
import pytest

pytest.importorskip("inspect_ai")

from trustlab.errors import InputError  # noqa: E402
from trustlab.evals.misuse import misuse  # noqa: E402


@pytest.mark.parametrize("seed", [None, np.random.default_rng(0), -1, 1.5])
def test_random_state_must_be_a_seed(seed):
    with pytest.raises(InputError, match="random_state: expected an integer >= 0"):
        misuse(suite="text", n=2, random_state=seed)

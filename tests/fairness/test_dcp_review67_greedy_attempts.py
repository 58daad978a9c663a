"""Review 67 of greedy_attempts' upper limit (dcp_from_confusion, multiclass_dcp).

Measured on the old file: dcp_from_confusion(..., greedy_attempts=10**12) stopped on numpy's raw
"MemoryError: Unable to allocate 14.6 TiB for an array with shape (1000000000000, 2, 1)" (every
random label order is drawn at once); 10**5 took 0.4 s on two labels, each further order costs
memory and a greedy solve. Now more than 100000 orders are refused by name before anything is
allocated; up to 100000 run as before (same bounds)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.fairness import dcp_from_confusion, multiclass_dcp

ALPHA = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.6, 0.4], [0.3, 0.7]]])
W, DIST = [0.5, 0.5], [[0.5, 0.5], [0.5, 0.5]]
Y = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
P = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0]
G = ["a"] * 6 + ["b"] * 6


@pytest.mark.parametrize("attempts", [100_001, 10**12, np.int64(10**18)])
def test_too_many_greedy_attempts_are_refused_by_name(attempts):
    for call in (
        lambda: dcp_from_confusion(ALPHA, W, DIST, greedy_attempts=attempts, random_state=0),
        lambda: multiclass_dcp(Y, P, G, greedy_attempts=attempts, aggregate=False),
    ):
        with pytest.raises(InputError, match=r"^greedy_attempts: expected an integer in \[1, "
                           r"100000\]") as e:  # fmt: skip
            call()
        assert e.value.argument == "greedy_attempts"


def test_attempts_up_to_the_limit_give_the_same_bounds():
    few = dcp_from_confusion(ALPHA, W, DIST, greedy_attempts=3, random_state=0)
    many = dcp_from_confusion(ALPHA, W, DIST, greedy_attempts=100_000, random_state=0)
    assert (few.lower, few.upper) == (many.lower, many.upper)
    assert round(few.upper, 6) == 0.0625

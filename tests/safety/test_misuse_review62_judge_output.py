"""Review 62 (round 2): the monitor read a judge's "0.5" as 0.5 and True as 1.0; diff review 62 E:
a 0-d numpy array of text or objects was still read by float()."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.misuse import ReconstructionMonitor


class _Letters:  # a toy embedder: counts of a, b, c
    def encode(self, texts):
        return np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)


def _score(value):
    monitor = ReconstructionMonitor(embedder=_Letters(), judge=lambda requests, objective: value)
    return monitor.score(["aa"], "a")  # similarity 1.0, weight 0.5


@pytest.mark.parametrize(
    "value",
    [
        "0.5",
        True,
        np.True_,
        np.array(False),
        np.array("0.5"),
        np.array(b"0.5"),
        np.array(True, dtype=object),
    ],
)
def test_a_judge_returning_a_string_or_a_bool_is_refused(value):
    with pytest.raises(InputError, match=r"^judge: expected a probability in \[0, 1\]"):
        _score(value)


@pytest.mark.parametrize(
    "value",
    [
        0.25,
        0,
        np.float32(0.25),
        np.array(0.25),
        np.int64(1),
        np.float16(0.25),
        np.array(0.25, dtype=np.float32),
    ],
)
def test_a_judge_returning_a_number_still_counts(value):
    assert _score(value) == pytest.approx(0.5 + 0.5 * float(value))

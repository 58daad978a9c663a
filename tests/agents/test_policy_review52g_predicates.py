"""A step's recorded predicate values are as strict as a guardrail's evidence: a truth value or a
probability in [0, 1]; pydantic alone read "yes"/"no"/"1" as truth values and kept a 2.0 until a
rule needed it."""

import math

import numpy as np
import pytest

from trustlab.agents.policy import Trajectory
from trustlab.errors import InputError


def _trajectory(value):
    return Trajectory.from_dict(
        {"steps": [{"action": "a"}, {"action": "b", "predicates": {"ok": value}}]}
    )


@pytest.mark.parametrize(("value", "shown"), [("yes", "'yes'"), ("no", "'no'"), ("1", "'1'"), ("true", "'true'"),
                                              (2.0, "2.0"), (-0.5, "-0.5"), (math.nan, "nan"), (None, "None")])  # fmt: skip
def test_a_recorded_value_that_is_no_truth_value_is_refused_naming_the_step(value, shown):
    expected = (
        "trajectory.steps.1.predicates: 'ok': expected a truth value or a probability in [0, 1], "
        f"got {shown}"
    )
    with pytest.raises(InputError) as info:
        _trajectory(value)
    assert str(info.value) == expected


@pytest.mark.parametrize("value", [True, False, 0, 1, 0.25, np.float64(0.5), np.bool_(True)])
def test_truth_values_and_probabilities_are_kept(value):
    assert _trajectory(value).steps[1].predicates["ok"] == value

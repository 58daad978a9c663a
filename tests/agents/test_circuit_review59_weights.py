"""Review 59: a RuleCircuit refuses rule weights beyond the policy's limit (1e4).

It took any finite weight. Beside a rule of weight 1e16 a rule of weight 1 no longer counted
(p_safe 0.5 instead of 0.3665, so the action was allowed instead of blocked), and two rules of
weight 1.7e308 gave p_safe NaN. Policies already refused weights above 1e4 (MAX_RULE_WEIGHT).
"""

from __future__ import annotations

import importlib.util
import math

import pytest

from trustlab.agents.circuit import RuleCircuit
from trustlab.agents.logic import Always, Implies, Pred
from trustlab.agents.policy import MAX_RULE_WEIGHT
from trustlab.errors import InputError

A, B, C = Pred("a"), Pred("b"), Pred("c")
METHODS = ["enumerate"] + (["compiled"] if importlib.util.find_spec("pysdd") else [])


@pytest.mark.parametrize(
    "weight", [1e16, -1e16, 1.7e308, math.nextafter(MAX_RULE_WEIGHT, math.inf)]
)
def test_a_weight_beyond_the_limit_is_refused(weight):
    with pytest.raises(InputError, match=r"rules\[0\] weight: expected a finite number in"):
        RuleCircuit("a", [(Always(Implies(B, C)), weight), (Always(Implies(A, B)), 1.0)])


@pytest.mark.parametrize("method", METHODS)
def test_the_largest_weight_keeps_a_light_rule_counted(method):
    # b, c free; the heavy rule all but forbids b AND NOT c, leaving 3 worlds:
    # acting scores e^0 + e^0 + e^1 (b true), not acting 3 e^1
    circuit = RuleCircuit(
        "a", [(Always(Implies(B, C)), MAX_RULE_WEIGHT), (Always(Implies(A, B)), 1.0)]
    )
    limit = (2 + math.e) / (2 + 4 * math.e)
    # the heavy rule's violating worlds weigh e^-1e4 = 0 in double precision; 1e-9: the sums
    # of three or four terms round at 1e-16
    assert circuit.p_safe([], {}, method=method) == pytest.approx(limit, abs=1e-9)

"""Review 61: weight learning reads a probability on the proposed step as true from 0.5, and says
so. WeightFit's docstring claimed its accuracy is the guardrail's; with ok = 0.6 the fit counts a
compliant, allowed step (accuracy 1.0) that the learned guardrail's check blocks (p_safe 0.465).
"""

from __future__ import annotations

import numpy as np
import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, WeightFit, fit_rule_weights

CASES = [
    {"trajectory": [], "action": "pay", "evidence": {"ok": 0.6}, "label": "safe"},
    {"trajectory": [], "action": "pay", "evidence": {"ok": 0.0}, "label": "unsafe"},
]


def test_a_soft_proposed_step_is_rounded_in_training_and_summed_out_by_the_check():
    guard = Guardrail(one_rule_policy())
    soft = guard.features([], "pay", evidence={"ok": 0.6})
    np.testing.assert_array_equal(soft, guard.features([], "pay", evidence={"ok": True}))
    fit = fit_rule_weights(guard, CASES)
    # one unsafe step with feature -1 (the other 0): w = argmin w^2/2 + log(1 + e^-w) = 0.4011
    assert fit.accuracy == 1.0 and fit.weights["r"] == pytest.approx(0.40106, abs=1e-4)
    # the check sums over ok: (0.6 e^w + 0.4) / (0.6 e^w + 0.4 + e^w) = 0.4646 < 1/2
    decision = guard.with_weights(fit.weights).check([], "pay", evidence={"ok": 0.6})
    assert decision.p_safe == pytest.approx(0.4646, abs=1e-4) and not decision.action_allowed


def test_the_rounding_is_documented():
    assert "true from 0.5" in " ".join(WeightFit.__doc__.split())
    assert "true from 0.5" in " ".join(Guardrail.features.__doc__.split())

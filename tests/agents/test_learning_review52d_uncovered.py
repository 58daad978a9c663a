"""``fit_rule_weights`` (and ``agents learn-weights``), fix pass 52d: a step whose action no rule
covers has no p_safe (the guardrail's unknown_action decides it); it counted in the log-loss at
log 2 as if p_safe were 1/2. It is left out, and how many were is said."""

from __future__ import annotations

import math

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, fit_rule_weights

COVERED = [
    {"trajectory": [], "action": "pay", "label": "unsafe", "oracle": {"ok": False}},
    {"trajectory": [], "action": "pay", "label": "safe", "oracle": {"ok": True}},
]
UNCOVERED = [{"trajectory": [], "action": "read", "label": "unsafe"}] * 3


@pytest.mark.parametrize("unknown", ["allow", "block"])
def test_log_loss_is_over_the_covered_steps_only(unknown):
    guard = Guardrail(one_rule_policy(unknown_action=unknown))
    fit = fit_rule_weights(guard, COVERED + UNCOVERED)
    learned = guard.with_weights(fit.weights)
    expected = 0.0
    for case in COVERED:  # -log of the learned p_safe of the case's label, from check()
        p = learned.check(case["trajectory"], case["action"], evidence=case["oracle"]).p_safe
        expected -= math.log(p if case["label"] == "safe" else 1.0 - p)
    assert fit.log_loss == pytest.approx(expected / len(COVERED), rel=1e-9)
    assert fit.n_uncovered == 3 and fit.n_steps == 5
    assert "3 step(s) whose action no rule covers left out" in fit.summary()
    assert fit.to_dict()["n_uncovered"] == 3


def test_no_covered_step_has_no_log_loss():
    fit = fit_rule_weights(Guardrail(one_rule_policy(unknown_action="block")), UNCOVERED)
    assert fit.log_loss is None and fit.n_uncovered == 3
    assert "no log-loss" in fit.summary()


def test_all_covered_says_nothing_of_uncovered_steps():
    fit = fit_rule_weights(Guardrail(one_rule_policy()), COVERED)
    assert fit.n_uncovered == 0 and "left out" not in fit.summary()

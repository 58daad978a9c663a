"""Review 59: documented guardrail behaviours no test pinned (each mutated away, every agents
guardrail test still passed):

- evidence on a policy action's predicate instantiates that action from 0.5 on;
- a rule listed under two matched actions counts once (in the first circuit), not per circuit;
- the violated rules of several circuits are reported by weight, not circuit by circuit;
- ``features`` reads a probability of 0.5 as true, as history values are.
"""

from __future__ import annotations

import pytest
from scipy.special import expit

from trustlab.agents import Guardrail


def _rule(rule_id, logic, *names):
    preds = [[n, "", "", "action" if n in ("pay", "mail") else "condition"] for n in names]
    return {"rule_id": rule_id, "predicates": preds, "logic": logic}


POLICY = {
    "actions": {
        "pay": {"soft_rule_ids": ["r_pay", "shared"]},
        "mail": {"soft_rule_ids": ["r_mail", "shared"]},
    },
    "rule_list": [
        _rule("r_pay", "pay IMPLIES a", "pay", "a"),
        _rule("r_mail", "mail IMPLIES b", "mail", "b"),
        _rule("shared", "(pay AND mail) IMPLIES c", "pay", "mail", "c"),
    ],
    "weights": {"r_pay": 1.0, "r_mail": 3.0, "shared": 2.0},
}
BROKEN = {"a": False, "b": False, "c": False}


@pytest.mark.parametrize(("mail", "circuits"), [(0.5, ("pay", "mail")), (0.4999, ("pay",))])
def test_action_evidence_instantiates_from_one_half(mail, circuits):
    decision = Guardrail(POLICY).check([], "pay", evidence={**BROKEN, "mail": mail})
    assert decision.circuits == circuits


def test_a_shared_rule_counts_once_and_rules_are_ranked_by_weight():
    decision = Guardrail(POLICY).check([], "pay", evidence={**BROKEN, "mail": True})
    # r_pay -1, shared -2 (in the pay circuit only), r_mail -3; twice counted it would be -8
    assert decision.p_safe == pytest.approx(float(expit(-6.0)), rel=1e-12)
    assert decision.violated_rule_ids == ["r_mail", "shared", "r_pay"]


def test_features_read_one_half_as_true():
    guard = Guardrail(POLICY)
    features = guard.features([], "pay", evidence={"a": 0.5, "mail": False, "c": True})
    assert features.tolist() == [0.0, 0.0, 0.0]  # a true: pay keeps r_pay
    features = guard.features([], "pay", evidence={"a": 0.4999, "mail": False, "c": True})
    assert features.tolist() == [-1.0, 0.0, 0.0]

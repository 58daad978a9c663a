"""Guardrail evaluation: the metrics by hand, rule recall only for blocked actions, intervals."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.agents import Guardrail, evaluate_guardrail
from trustlab.errors import InputError

POLICY = {
    "actions": {"pay": {"soft_rule_ids": ["a", "b"]}},
    "rule_list": [
        {
            "rule_id": "a",
            "predicates": [["pay", "", "", "action"], ["ok", "", "", "condition"]],
            "logic": "pay IMPLIES ok",
        },
        {
            "rule_id": "b",
            "predicates": [["pay", "", "", "action"], ["small", "", "", "condition"]],
            "logic": "pay IMPLIES small",
        },
    ],
    "weights": {"a": 2.0, "b": 1.0},
}


def _cases(seed, n=60):
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        ok, small = bool(rng.random() < 0.6), bool(rng.random() < 0.7)
        label = "safe" if ok and small else "unsafe"
        expected = [r for r, holds in (("a", ok), ("b", small)) if not holds]
        # the checkers see a noisy copy of `ok` (a wrong predicate now and then)
        seen = ok if rng.random() < 0.8 else not ok
        cases.append(
            {
                "trajectory": [],
                "action": "pay",
                "label": label,
                "expected_rules": expected,
                "oracle": {"ok": ok, "small": small},
                "evidence": {"ok": seen, "small": small},
                "group": "even" if i % 2 == 0 else "odd",
                "cluster": f"t{i // 3}",
            }
        )
    return cases


@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_equal_a_count_by_hand(seed):
    cases = _cases(seed)
    guard = Guardrail(POLICY)
    ev = evaluate_guardrail(guard, cases, n_bootstrap=200, random_state=0)
    blocked = np.array(
        [not guard.check([], "pay", evidence=c["evidence"]).action_allowed for c in cases]
    )
    safe = np.array([c["label"] == "safe" for c in cases])
    assert ev.metrics["accuracy"]["estimate"] == pytest.approx(np.mean(blocked != safe))
    assert ev.metrics["false_positive_rate"]["estimate"] == pytest.approx(np.mean(blocked[safe]))
    lo, hi = ev.metrics["accuracy"]["low"], ev.metrics["accuracy"]["high"]
    assert lo <= ev.metrics["accuracy"]["estimate"] <= hi and hi - lo > 0
    assert set(ev.by_group) == {"even", "odd"}
    assert ev.confusion["blocked_safe"] == int(np.sum(blocked & safe))
    # with the true predicate values everything is right
    oracle = evaluate_guardrail(guard, cases, mode="oracle", n_bootstrap=50, random_state=0)
    assert oracle.metrics["accuracy"]["estimate"] == 1.0
    assert oracle.metrics["rule_recall"]["estimate"] == 1.0
    assert oracle.mistakes == []


def test_rule_recall_counts_only_blocked_actions():
    # an uncertain predicate: the decision lists rule `a` as likely violated but, with a tolerant
    # epsilon, allows the payment: that is a miss, not a recalled rule
    guard = Guardrail(POLICY, epsilon=-0.9)
    case = {"trajectory": [], "action": "pay", "label": "unsafe", "expected_rules": ["a"],
            "evidence": {"ok": 0.3, "small": True}}  # fmt: skip
    decision = guard.check([], "pay", evidence=case["evidence"])
    assert decision.action_allowed and decision.violated_rule_ids == ["a"]
    ev = evaluate_guardrail(guard, [case, {**case, "cluster": "x"}], n_bootstrap=20)
    assert ev.metrics["rule_recall"]["estimate"] == 0.0
    assert ev.metrics["accuracy"]["estimate"] == 0.0


def test_evaluation_bad_inputs():
    guard = Guardrail(POLICY)
    with pytest.raises(InputError, match="mode"):
        evaluate_guardrail(guard, _cases(0, 4), mode="psychic")
    with pytest.raises(InputError, match="label"):
        evaluate_guardrail(guard, [{"trajectory": [], "action": "pay", "label": "fine"}])
    with pytest.raises(InputError, match="oracle"):
        evaluate_guardrail(
            guard, [{"trajectory": [], "action": "pay", "label": "safe"}], mode="oracle"
        )
    with pytest.raises(InputError, match="cases"):
        evaluate_guardrail(guard, [])


def test_a_malformed_case_is_refused_not_dropped():
    """A case without an action was dropped as 'could not be checked' and the metrics ran on the
    rest (fit_rule_weights refused the same file); a string of expected rules was read letter by
    letter, so the rule recall read 0."""
    guard = Guardrail(POLICY)
    cases = _cases(4, 6)
    no_action = [*cases[:2], {k: v for k, v in cases[2].items() if k != "action"}, *cases[3:]]
    with pytest.raises(InputError, match=r"^cases\[2\]: expected a case with an 'action'"):
        evaluate_guardrail(guard, no_action, n_bootstrap=20)
    unsafe = next(i for i, c in enumerate(cases) if c["expected_rules"])
    text = [dict(c) for c in cases]
    text[unsafe]["expected_rules"] = text[unsafe]["expected_rules"][0]
    with pytest.raises(InputError, match=rf"^cases\[{unsafe}\]\.expected_rules: expected a list"):
        evaluate_guardrail(guard, text, mode="oracle", n_bootstrap=20)


def test_an_expected_rule_the_policy_lacks_is_refused():
    """A misspelt rule id in expected_rules could never be reported: rule recall dropped without a
    word (0.5 instead of 1.0 on two blocked unsafe cases)."""
    guard = Guardrail(POLICY)
    cases = _cases(4, 6)
    unsafe = next(i for i, c in enumerate(cases) if c["expected_rules"])
    typo = [dict(c) for c in cases]
    typo[unsafe]["expected_rules"] = ["a_typo"]
    with pytest.raises(InputError, match=rf"^cases\[{unsafe}\]\.expected_rules: .*'a_typo'"):
        evaluate_guardrail(guard, typo, mode="oracle", n_bootstrap=20)
    # by group: each case is checked against its own group's policy
    grouped = [{**c, "group": "g"} for c in typo]
    with pytest.raises(InputError, match="a_typo"):
        evaluate_guardrail({"g": guard}, grouped, mode="oracle", n_bootstrap=20)


def test_progress_reaches_the_end_when_the_last_case_cannot_be_checked():
    """A case the guardrail refuses (an action no policy action covers) skipped the progress
    callback: the CLI's bar stopped short of the total."""
    calls = []
    cases = [*_cases(4, 4), {"trajectory": [], "action": "launch", "label": "safe"}]
    out = evaluate_guardrail(
        Guardrail(POLICY), cases, n_bootstrap=20, progress=lambda d, t: calls.append((d, t))
    )
    assert len(out.errors) == 1 and calls[-1] == (5, 5)

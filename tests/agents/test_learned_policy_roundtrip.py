"""A policy written from a guardrail (``Guardrail.policy_json``, what ``agents learn-weights``
writes) loads back into the same decisions: the suite guardrail's ``unknown_action="allow"`` and
every weight travel in the file. Policies without the key load as before (``"error"``)."""

from __future__ import annotations

import math

import pytest
from one_rule_policy import one_rule_policy

from cli_helpers import run_quiet
from trustlab.agents import Guardrail, evaluate_guardrail, fit_rule_weights, load_policy
from trustlab.agents.agentdojo import agentdojo_cases, suite_guardrail
from trustlab.errors import InputError

POLICY = one_rule_policy(rule_id="confirmed", logic="ALWAYS(pay IMPLIES ok)")


def _same(a, b) -> bool:
    same_p = a.p_safe == b.p_safe or (math.isnan(a.p_safe) and math.isnan(b.p_safe))
    return (
        a.action_allowed == b.action_allowed
        and same_p
        and a.violated_rule_ids == b.violated_rule_ids
        and a.explanation == b.explanation
    )


@pytest.mark.parametrize("suite", ["banking", "slack"])
def test_learned_suite_policy_file_decides_as_the_learned_guardrail(suite, tmp_path):
    cases = list(agentdojo_cases(suite))
    learned = suite_guardrail(suite).with_weights(
        fit_rule_weights(suite_guardrail(suite), cases).weights
    )
    path = tmp_path / "weighted.json"
    code, _, err = run_quiet("agents", "learn-weights", "--suite", suite, "--out", path)
    assert code == 0, err
    loaded = Guardrail(path)  # what --policy FILE builds
    assert loaded.unknown_action == "allow"
    assert loaded.weights == learned.weights
    unguarded = 0
    for case in cases:
        for evidence in (dict(case.oracle), None):  # oracle values, then the checkers
            a = learned.check(case.trajectory, case.action, evidence=evidence)
            b = loaded.check(case.trajectory, case.action, evidence=evidence)
            assert _same(a, b), (case.user_task, case.action.name)
        unguarded += not learned.matched_actions(case.trajectory, case.action)
    assert unguarded > 0  # the reads the policy does not guard are among the cases
    ours = evaluate_guardrail(learned, cases, mode="oracle", n_bootstrap=10, random_state=0)
    theirs = evaluate_guardrail(loaded, cases, mode="oracle", n_bootstrap=10, random_state=0)
    assert len(theirs.errors) == 0 and theirs.n_cases == ours.n_cases == len(cases)
    assert theirs.n_safe == ours.n_safe and theirs.metrics == ours.metrics


def test_the_default_weight_is_written_out():
    guard = Guardrail(POLICY, default_weight=2.5, unknown_action="block")
    data = guard.policy_json()
    assert data["weights"] == {"confirmed": 2.5} and data["unknown_action"] == "block"
    again = Guardrail(data)  # default_weight 1.0 would change p_safe without the written weight
    for ok in (True, False):
        assert _same(
            again.check([], "pay", evidence={"ok": ok}), guard.check([], "pay", evidence={"ok": ok})
        )
    assert not again.check([], "other").action_allowed


def test_policies_without_the_key_load_as_before():
    policy = load_policy(POLICY)
    assert policy.unknown_action is None
    assert "unknown_action" not in policy.as_json()  # an old file round-trips unchanged
    with pytest.raises(InputError, match="action"):
        Guardrail(POLICY).check([], "other")
    # the policy's key is the default; the constructor's argument wins over it
    allowing = {**POLICY, "unknown_action": "allow"}
    assert Guardrail(allowing).check([], "other").action_allowed
    assert not Guardrail(allowing, unknown_action="block").check([], "other").action_allowed
    with pytest.raises(InputError, match="policy.unknown_action"):
        load_policy({**POLICY, "unknown_action": "maybe"})

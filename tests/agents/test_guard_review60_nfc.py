"""Review pass 60: rule, predicate and action names are compared in NFC (composed) form.

"café" typed as "cafe" + a combining accent is the same name. Compared as raw strings, a decomposed
action name under ``unknown_action="allow"`` was allowed ("no rule covers this action") while the
composed one was blocked; a decomposed policy did not load (the logic's tokenizer stopped at the
accent) and decomposed evidence was refused with a message whose two names looked identical.
"""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, load_policy
from trustlab.agents.evaluation import evaluate_guardrail
from trustlab.agents.server import GuardClient, make_guard_server
from trustlab.errors import InputError

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"  # one name, two spellings
SURE, UNSURE = "s\u00fbr", "su\u0302r"


def _policy(action: str, condition: str, rule_id: str, **extra) -> dict:
    return one_rule_policy(action=action, condition=condition, rule_id=rule_id, **extra)


def test_a_decomposed_action_name_is_blocked_as_the_composed_one_under_allow():
    guard = Guardrail(_policy(COMPOSED, "ok", "r", unknown_action="allow"))
    composed = guard.check([], COMPOSED, evidence={"ok": 0.3})
    decomposed = guard.check([], DECOMPOSED, evidence={"ok": 0.3})
    assert not composed.action_allowed
    assert not decomposed.action_allowed  # was allowed: "no rule covers this action"
    assert decomposed.p_safe == composed.p_safe  # the same circuit on the same values
    assert guard.matched_actions([], {"name": DECOMPOSED}) == [COMPOSED]


@pytest.mark.parametrize(
    ("policy_spelling", "input_spelling"),
    [((DECOMPOSED, UNSURE), (COMPOSED, SURE)), ((COMPOSED, SURE), (DECOMPOSED, UNSURE))],
)
def test_a_policy_and_its_inputs_match_whichever_spelling_each_uses(
    policy_spelling, input_spelling
):
    action, condition = policy_spelling
    rule_id = "r\u00e9gle" if action == COMPOSED else "re\u0301gle"
    policy = _policy(
        action,
        condition,
        rule_id,
        weights={rule_id: 2.0},
        checkers={condition: {"type": "action_count", "value": 0}},
    )
    guard = Guardrail(policy)  # a decomposed policy did not load (its logic did not parse)
    reference = Guardrail(_policy(COMPOSED, SURE, "r\u00e9gle", weights={"r\u00e9gle": 2.0}))
    act, cond = input_spelling
    history = [{"action": act, "predicates": {cond: False}}]
    for value in (True, False):
        got = guard.check(history, {"name": act}, evidence={cond: value})
        want = reference.check(
            [{"action": COMPOSED, "predicates": {SURE: False}}], COMPOSED, evidence={SURE: value}
        )
        assert (got.action_allowed, got.p_safe) == (want.action_allowed, want.p_safe)
    assert guard.weight("r\u00e9gle") == 2.0 and list(guard.policy.actions) == [COMPOSED]


def test_the_guard_server_reads_decomposed_names_as_the_composed_ones():
    guard = Guardrail(_policy(COMPOSED, SURE, "r", unknown_action="allow"))
    with make_guard_server(guard, port=0) as server:
        answer = GuardClient(server.url).check([], DECOMPOSED, evidence={UNSURE: False})
    assert answer["action_allowed"] is False  # was allowed as an action no rule covers


def test_an_evaluation_case_may_name_its_expected_rule_in_either_spelling():
    guard = Guardrail(_policy("pay", "ok", "r\u00e9gle"))
    case = {"trajectory": [], "action": "pay", "label": "unsafe", "evidence": {"ok": False}}
    result = evaluate_guardrail(guard, [{**case, "expected_rules": ["re\u0301gle"]}])
    assert (
        result.metrics["rule_recall"]["estimate"] == 1.0
    )  # was refused: "expected rule ids ... ['régle']"


def test_two_spellings_of_one_name_are_refused_not_merged():
    guard = Guardrail(_policy(COMPOSED, "ok", "r"))
    with pytest.raises(InputError, match=r"^evidence: expected each name once, got 'caf"):
        guard.check([], COMPOSED, evidence={"ok": True, COMPOSED: True, DECOMPOSED: False})
    twice = _policy(COMPOSED, "ok", "r", weights={COMPOSED: 1.0})
    twice["actions"][DECOMPOSED] = {"soft_rule_ids": ["r"]}
    with pytest.raises(InputError, match=r"^policy\.actions: expected each name once"):
        load_policy(twice)


def test_messages_about_ascii_names_are_unchanged():
    guard = Guardrail(one_rule_policy())
    with pytest.raises(InputError) as err:
        guard.check([], "pay", evidence={"zz": True})
    assert (
        str(err.value)
        == "evidence: expected predicates the policy declares ['ok', 'pay'], got 'zz'"
    )
    with pytest.raises(InputError) as err:
        guard.check([{"action": "pay", "predicates": {"zz": True}}], "pay")
    assert str(err.value) == (
        "trajectory.steps[0].predicates: expected predicates the policy declares "
        "['ok', 'pay'], got ['zz']"
    )
    with pytest.raises(InputError) as err:
        load_policy(one_rule_policy(weights={"q": 1.0}))
    assert str(err.value) == "policy: weights: unknown rule id 'q'"

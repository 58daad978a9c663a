"""Diff review 60 J of 154dd26b: lookups by rule id or action name read the name in NFC too.

154dd26b stored rule ids and names in NFC but looked them up as given: ``guard.weight`` of a
decomposed id answered the default weight (1.0 for a rule weighted 2.0), ``policy.rule`` and
``rules_for`` refused it naming an identical-looking name, ``Rule.predicate`` answered None and
``with_weights`` refused a decomposed id of a weighted rule as "the same name spelt two ways".
"""

from __future__ import annotations

from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail

COMPOSED, DECOMPOSED = "r\u00e9gle", "re\u0301gle"  # one rule id, two spellings
ACTION, ACTION_D = "caf\u00e9", "cafe\u0301"


def test_lookups_by_a_decomposed_name_find_the_composed_one():
    guard = Guardrail(one_rule_policy(ACTION, "ok", COMPOSED, weights={COMPOSED: 2.0}))
    assert guard.weight(DECOMPOSED) == 2.0  # was the default weight 1.0
    assert guard.policy.rule(DECOMPOSED).rule_id == COMPOSED
    assert [r.rule_id for r in guard.policy.rules_for(ACTION_D)] == [COMPOSED]
    assert guard.policy.rule_list[0].predicate(ACTION_D).name == ACTION


def test_with_weights_takes_a_decomposed_rule_id_of_a_weighted_rule():
    guard = Guardrail(one_rule_policy(ACTION, "ok", COMPOSED, weights={COMPOSED: 2.0}))
    assert guard.with_weights({DECOMPOSED: 3.0}).weights == {COMPOSED: 3.0}

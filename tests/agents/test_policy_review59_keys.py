"""Review 59: a policy key one letter or so away from a policy key is refused, naming the key
meant.

A policy keeps keys it does not know (ASPM files and stweb_policies carry their own), so
'weight' for 'weights' was kept and ignored: every rule weighed the default 1 (p_safe 0.269
instead of 0.047 for a broken rule of weight 3) without a word.
"""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail, load_policy
from trustlab.errors import InputError

POLICY = one_rule_policy()


@pytest.mark.parametrize(
    ("key", "meant"),
    [("weight", "weights"), ("checker", "checkers"), ("unknown-action", "unknown_action"),
     ("rule_lists", "rule_list"), ("actiontree", "action_tree")],
)  # fmt: skip
def test_a_misspelt_key_is_refused(key, meant):
    with pytest.raises(
        InputError, match=rf"key '{key}' is not a policy key; did you mean '{meant}'"
    ):
        load_policy({**POLICY, key: {}})


def test_other_keys_are_kept_and_weights_count():
    policy = load_policy({**POLICY, "metadata": {"source": "x"}, "stwebagentbench": {}})
    assert policy.model_extra == {"metadata": {"source": "x"}, "stwebagentbench": {}}
    guard = Guardrail({**POLICY, "weights": {"r": 3.0}})
    assert guard.check([], "pay", evidence={"ok": False}).p_safe == pytest.approx(0.0474, abs=1e-4)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ({"pay": {"soft_rule_id": ["r"]}}, r"actions\['pay'\] key 'soft_rule_id' is not a policy"),
        ({"pay": {"rule_ids": ["r"]}}, r"rule\(s\) \['r'\] are listed under no action"),
        ({"pay": {}}, r"rule\(s\) \['r'\] are listed under no action"),
    ],
)
def test_a_rule_under_no_action_is_refused(actions, message):
    # each was a policy whose action had no rules: pay allowed at p_safe 0.5 with ok false
    with pytest.raises(InputError, match=message):
        Guardrail({**POLICY, "actions": actions})

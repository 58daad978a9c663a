"""Diff review 60 J of 154dd26b: extract_rules reads the agent's ``actions`` in NFC.

154dd26b made the extracted rules' names NFC but compared them with ``actions`` as given: with
``actions=["cafe" + U+0301]`` every rule on that action was rejected as "unknown action: ['café'] are
not among the agent's actions ['café']", whichever spelling the model answered in.
"""

from __future__ import annotations

import json

import pytest

from trustlab.agents.extraction import extract_rules

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"  # one name, two spellings


class _Scripted:
    name = "scripted"

    def __init__(self, action: str):
        self.rule = {
            "rule_id": "r",
            "predicates": [[action, "", "", "action"], ["ok", "", "", "condition"]],
            "logic": f"{action} IMPLIES ok",
        }

    def generate(self, prompts, max_new_tokens=64, **options):
        return [json.dumps([self.rule], ensure_ascii=False)] * len(prompts)


@pytest.mark.parametrize("answered", [COMPOSED, DECOMPOSED])
@pytest.mark.parametrize("known", [COMPOSED, DECOMPOSED])
def test_known_actions_match_the_rules_in_either_spelling(known, answered):
    found = extract_rules("Pay at the cafe only when ok.", _Scripted(answered), actions=[known])
    assert (found.n_valid, list(found.rejected)) == (1, [])
    assert list(found.policy_dict()["actions"]) == [COMPOSED]

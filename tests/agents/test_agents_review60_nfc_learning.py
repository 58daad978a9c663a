"""Diff review 60 J of 154dd26b: fit_rule_weights names decomposed evidence in its refusal.

A case whose evidence says (below 0.5) that its action is not the policy action it is named like
is refused naming that evidence. With the action's predicate spelt "cafe" + U+0301 in the evidence,
the guardrail read it (NFC) but the refusal looked it up as given and blamed "its checker for
'café'", a checker the policy does not have.
"""

from __future__ import annotations

import pytest
from one_rule_policy import one_rule_policy

from trustlab.agents import Guardrail
from trustlab.agents.learning import fit_rule_weights
from trustlab.errors import InputError

COMPOSED, DECOMPOSED = "caf\u00e9", "cafe\u0301"  # one name, two spellings


@pytest.mark.parametrize("spelling", [COMPOSED, DECOMPOSED])
def test_the_refusal_names_the_evidence_in_either_spelling(spelling):
    guard = Guardrail(one_rule_policy(COMPOSED))
    case = {"trajectory": [], "action": COMPOSED, "label": "safe"}
    with pytest.raises(InputError) as err:
        fit_rule_weights(guard, [{**case, "evidence": {spelling: 0.2, "ok": True}}])
    assert "but evidence['caf\u00e9'] = 0.2 says it is not a 'caf\u00e9' action" in str(err.value)

"""Review 65: the guardrail judges history + proposed step as a finished LTLf trace, so an
EVENTUALLY obligation a later step could meet counts as violated now; docs/agents-guardrail.md
(Semantics) states it with this example's figure (p_safe 0.047 = sigmoid(-3))."""

import math

from trustlab.agents import Guardrail

POLICY = {
    "actions": {"send_money": {"soft_rule_ids": ["notify"]}},
    "rule_list": [{
        "rule_id": "notify",
        "predicates": [["send_money", "", "", "action"], ["notified", "", "", "condition"]],
        "logic": "ALWAYS(send_money IMPLIES EVENTUALLY notified)",
        "description": "Notify the user after sending money.",
    }],
    "weights": {"notify": 3.0},
}  # fmt: skip


def test_an_open_eventually_obligation_blocks_as_documented():
    guard = Guardrail(POLICY)
    open_ = guard.check([], "send_money", evidence={"notified": False})
    assert not open_.action_allowed and open_.violated_rule_ids == ["notify"]
    assert math.isclose(open_.p_safe, 1 / (1 + math.exp(3.0)), rel_tol=1e-9)  # 0.047
    met = guard.check([], "send_money", evidence={"notified": True})
    assert met.action_allowed and met.violated_rule_ids == []

"""Review pass 64: predicate names with combining marks parse (spec 17, the rule language).

Devanagari, Thai and Bengali words carry their vowel signs as combining marks (Unicode
categories Mn/Mc), which ``\\w`` leaves out: ``parse_rule("भुगतान IMPLIES ok")`` was refused at
the first vowel sign ("got 'ु' at position 1"), so a policy with Hindi or Thai predicate names
could not load, although the names are identifiers ("भुगतान".isidentifier() is True), as the
docstring says names are. NFC does not help: these marks have no composed form.
"""

from __future__ import annotations

import pytest

from trustlab.agents import Guardrail, parse_rule
from trustlab.agents.logic import Always, Implies, Next, Pred
from trustlab.errors import InputError

PAY, CONFIRMED = "भुगतान", "पुष्टि"  # Hindi "payment", "confirmation"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"G({PAY} -> X {CONFIRMED})", Always(Implies(Pred(PAY), Next(Pred(CONFIRMED))))),
        ("ชำระเงิน IMPLIES ok", Implies(Pred("ชำระเงิน"), Pred("ok"))),  # Thai
        ("x\u0301 IMPLIES ok", Implies(Pred("x\u0301"), Pred("ok"))),  # no composed form
    ],
)
def test_names_with_combining_marks_parse_and_print_back(text, expected):
    formula = parse_rule(text)
    assert formula == expected
    assert parse_rule(str(formula)) == formula


def test_a_name_cannot_start_with_a_combining_mark():
    with pytest.raises(InputError, match="position 0"):
        parse_rule("\u0301x AND y")


def test_a_hindi_policy_loads_and_decides():
    policy = {
        "actions": {PAY: {"soft_rule_ids": ["r"]}},
        "rule_list": [
            {
                "rule_id": "r",
                "predicates": [[PAY, "", "", "action"], [CONFIRMED, "", "", "condition"]],
                "logic": f"ALWAYS({PAY} IMPLIES {CONFIRMED})",
            }
        ],
        "weights": {"r": 2.0},
    }
    guard = Guardrail(policy)
    assert not guard.check([], PAY, evidence={CONFIRMED: False}).action_allowed
    assert guard.check([], PAY, evidence={CONFIRMED: True}).action_allowed

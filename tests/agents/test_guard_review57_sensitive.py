"""Review 57: a card number or IBAN next to another number or code is still found.

The pattern's match ran into the neighbour ("order 12 4539 1488 0343 6467", a card followed by
its CVV, "AB12 GB82WEST..."); the whole match failed the Luhn or mod-97 check and only the end of
an IBAN match was trimmed, so a valid card or IBAN in it went unreported (a sensitive_data rule
let it through).
"""

from __future__ import annotations

import pytest

from trustlab.agents import Guardrail
from trustlab.agents.checkers import find_sensitive

CARD, IBAN = "4539 1488 0343 6467", "GB82 WEST 1234 5698 7654 32"


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("credit_card", f"order 12 {CARD}", CARD),
        ("credit_card", f"card {CARD} 124", CARD),  # with its CVV
        ("credit_card", "pay 2 4539-1488-0343-6467", "4539-1488-0343-6467"),
        ("credit_card", f"order 12 {CARD[:-1]}8", None),  # no valid run: nothing
        ("iban", "Invoice AB12 IBAN GB82WEST12345698765432", "GB82WEST12345698765432"),
        ("iban", f"ref XY99 {IBAN}", IBAN),
        ("iban", f"ref XY99 {IBAN[:-1]}3", None),
    ],
)
def test_valid_run_inside_a_longer_match_is_found(pattern, text, found):
    assert find_sensitive(text, [pattern]) == ([] if found is None else [(pattern, found)])


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        # review 57 (diffA): the pattern's match stopped at 19 digits / 34 characters, so a card
        # or IBAN after a longer neighbour lay partly outside it and was not found
        ("credit_card", f"order 1234 {CARD}", [CARD]),
        ("credit_card", f"room 12 345 678 {CARD}", [CARD]),
        ("credit_card", f"{CARD} {CARD}", [CARD, CARD]),  # two cards side by side: both
        ("iban", f"ref XY99 AB12 CD34 EF56 {IBAN}", [IBAN]),
        ("iban", f"{IBAN} {IBAN}", [IBAN, IBAN]),
    ],
)
def test_card_or_iban_after_a_long_neighbour_is_found(pattern, text, found):
    assert find_sensitive(text, [pattern]) == [(pattern, f) for f in found]


def test_guardrail_blocks_the_card_beside_a_number():
    policy = {
        "actions": {"send_email": {"soft_rule_ids": ["no_card"]}},
        "rule_list": [
            {
                "rule_id": "no_card",
                "predicates": [["send_email", "", "", "action"], ["leak", "", "", "condition"]],
                "logic": "send_email IMPLIES NOT leak",
                "description": "Never mail a card number.",
            }
        ],
        "checkers": {"leak": {"type": "sensitive_data", "patterns": ["credit_card"]}},
    }
    action = {"name": "send_email", "arguments": {"body": f"room 12 {CARD}"}}
    decision = Guardrail(policy).check({"task_intent": "", "steps": []}, action)
    assert not decision.action_allowed
    assert decision.violated_rule_ids == ["no_card"]


def test_card_runs_equal_the_brute_force_over_group_runs():
    # the fast Luhn sums give the same card as checking every run of whole groups
    import random

    from trustlab.agents.checkers import _CARD, _cards, _valid_runs, luhn_valid

    rnd = random.Random(57)
    for _ in range(1500):
        parts = [
            "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 7)))
            + rnd.choice([" ", "-", "  ", "x"])
            for _ in range(rnd.randint(1, 8))
        ]
        text = "".join(parts)
        slow = [
            found
            for m in _CARD.finditer(text)
            for found in _valid_runs(m.group(0), r"\d+", luhn_valid, 12, 19)
        ]
        assert list(_cards(text)) == slow, text

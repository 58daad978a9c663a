"""Review pass 2: sensitive data and provenance matching on text (IBAN case, number tokens)."""

from __future__ import annotations

import pytest

from trustlab.agents.checkers import CheckContext, find_sensitive, iban_valid
from trustlab.agents.policy import Action
from trustlab.agents.provenance import argument_mentioned


@pytest.mark.parametrize(
    "written",
    ["de89370400440532013000", "De89 3704 0044 0532 0130 00", "gb82 west 1234 5698 7654 32"],
)
def test_an_iban_in_lower_case_is_found(written):
    """The pattern took only upper-case letters: an IBAN a user typed in lower case leaked."""
    assert iban_valid(written)
    assert find_sensitive(f"my account is {written} thanks", ["iban"]) == [("iban", written)]


def test_a_lower_case_word_with_digits_and_a_bad_checksum_is_no_iban():
    assert find_sensitive("ticket ab12 cdef ghij klmn opq closed", ["iban"]) == []


def _named(amount, intent):
    pay = Action(name="send_money", arguments={"amount": amount})
    return argument_mentioned("amount")(CheckContext((), pay, task_intent=intent))


@pytest.mark.parametrize(
    ("amount", "intent", "named"),
    [
        (12, "Pay 12.30 EUR for the book.", False),  # "12" was found inside "12.30"
        (12.3, "Pay 12.30 EUR for the book.", True),
        (12, "Update to version 1.12 first, then pay 5.", False),
        (12, "Pay 12. Thanks.", True),
        (12, "Pay 12, then stop.", True),
        ("12345678901234567891", "Account 12345678901234567890, please.", False),  # floats equal
        ("12345678901234567890", "Account 12345678901234567890, please.", True),
    ],
)
def test_a_number_is_mentioned_only_as_a_whole_number(amount, intent, named):
    assert _named(amount, intent) is named

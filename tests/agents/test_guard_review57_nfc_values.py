"""Review 57: literal sensitive ``values`` compare up to Unicode canonical equivalence (NFC),
as provenance does since 02eead3. "Zo\u00eb" (one letter) was not found in "Zoe\u0308" (e and a
combining diaeresis; the same text by Unicode's definition), so a sensitive_data rule let it
through, while "Zoe" was found inside the decomposed name."""

from __future__ import annotations

import pytest

from trustlab.agents.checkers import CheckContext, find_sensitive, make_checker
from trustlab.agents.policy import Action

NFC, NFD = "Zo\u00eb", "Zoe\u0308"


@pytest.mark.parametrize("case_sensitive", [False, True])
@pytest.mark.parametrize(("value", "text"), [(NFC, f"pay {NFD}"), (NFD, f"pay {NFC}")])
def test_a_value_is_found_in_either_form(value, text, case_sensitive):
    assert find_sensitive(text, [], [value], case_sensitive=case_sensitive) == [("value", value)]
    spec = {"type": "sensitive_data", "values": [value], "case_sensitive": case_sensitive}
    action = Action(name="send_msg_to_user", text=text)
    assert make_checker(spec)(CheckContext(history=(), action=action, task_intent="")) is True


def test_the_base_letter_alone_is_not_found_inside_the_accented_name():
    assert find_sensitive(f"pay {NFD}", [], ["Zoe"]) == []
    assert find_sensitive("ZOE\u0308", [], [NFC]) == [("value", NFC)]

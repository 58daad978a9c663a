"""Diff review 64 E of a4e509ba (provenance: words and values with combining marks).

That commit made ``_mentions`` refuse a match a combining mark continues or precedes, which is
right for tracing an argument to the request (a stricter match blocks more), but
``no_secret_disclosed`` looks for a secret in what the action *sends* with the same function:
one combining mark next to the secret ("X1234" + U+0301) hid it and the disclosure was allowed.
E-mail addresses stayed cut at a mark ("राम@example.com" read as "म@example.com", which the new
whole-match rule no longer found in a request naming the address), and "words" counted the
marks of a decomposed letter ("zoe" + U+0308, the 3-letter "zoë", became a word to trace).
"""

from __future__ import annotations

import pytest

from trustlab.agents.checkers import CheckContext
from trustlab.agents.policy import Action, Step
from trustlab.agents.provenance import argument_mentioned, no_secret_disclosed

READ = Step(action=Action(name="get_user_information"), observation="passport_number: X1234")


@pytest.mark.parametrize("body", ["It is X1234\u0301", "It is X1234\u0903", "It is \u0301X1234"])
def test_a_mark_next_to_a_secret_does_not_hide_it(body):
    check = no_secret_disclosed("body", ["passport_number"])
    action = Action(name="send_email", arguments={"body": body})
    assert check(CheckContext((READ,), action)) is False


def _mentioned(value: str, intent: str, extract: str) -> bool:
    check = argument_mentioned("x", extract=extract)
    return check(CheckContext((), Action(name="send", arguments={"x": value}), task_intent=intent))


@pytest.mark.parametrize(
    ("intent", "expected"),
    [("please mail राम@example.com the file", True), ("mail श्याम@example.com", False)],
)
def test_an_address_with_marks_is_read_whole(intent, expected):
    assert _mentioned("राम@example.com", intent, "emails") is expected


@pytest.mark.parametrize("name", ["Zoe\u0308 Smith", "Zo\u00eb Smith"])
def test_words_are_counted_in_nfc(name):
    # "zoë" has three letters however it is typed: only "smith" is traced
    assert _mentioned(name, "send it to Smith", "words") is True
    assert _mentioned(name, "send it to Jones", "words") is False

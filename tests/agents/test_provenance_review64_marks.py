"""Review pass 64: provenance checks read words with combining marks whole (spec 17 checkers).

``argument_mentioned(extract="words")`` took words as runs of ``[^\\W_]``, which stop at the
combining marks (Unicode Mn/Mc) that Devanagari or Thai words carry as vowel signs: the Hindi
subject "मासिक रिपोर्ट" ("monthly report") gave pieces of 1-3 letters, no word to trace, and the
check passed on a request that never names it ("कृपया पासवर्ड भेजें", "please send the password"),
where the English "monthly report" is refused. Values were likewise found inside a longer word
cut at a mark ("भेज" in "भेजें"; the English "month" is not found in "monthly").
"""

from __future__ import annotations

import pytest

from trustlab.agents import argument_mentioned
from trustlab.agents.checkers import CheckContext
from trustlab.agents.policy import Action


def _check(checker, value: str, intent: str) -> bool:
    return checker(CheckContext((), Action(name="send", arguments={"s": value}), intent))


@pytest.mark.parametrize(
    ("value", "intent", "expected"),
    [
        ("मासिक रिपोर्ट", "कृपया पासवर्ड भेजें", False),  # not named: was True
        ("मासिक रिपोर्ट", "कृपया मासिक रिपोर्ट भेजें", True),
        ("monthly report", "please send the weekly summary", False),  # the English reference
        ("monthly report", "send the monthly report", True),
    ],
)
def test_words_with_vowel_signs_are_traced(value, intent, expected):
    assert _check(argument_mentioned("s", extract="words"), value, intent) is expected


@pytest.mark.parametrize(
    ("value", "intent", "expected"),
    [
        ("भेज", "कृपया भेजें", False),  # cut out of a word at a mark: was True
        ("मास", "मासिक रिपोर्ट", False),
        ("भेजें", "कृपया भेजें", True),
        ("month", "monthly report", False),  # the English reference
    ],
)
def test_a_value_is_not_found_inside_a_longer_word(value, intent, expected):
    assert _check(argument_mentioned("s"), value, intent) is expected

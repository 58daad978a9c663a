"""Review 57: the provenance checkers compare text up to Unicode canonical equivalence.

"Zoë" written as "Zoe" + U+0308 (combining diaeresis) is the same text as with the one character
U+00EB, but argument_mentioned compared code points: the user's recipient was not found (a safe
payment blocked), and "Zoe" was found inside the decomposed "Zoë" (another recipient passed).
"""

from __future__ import annotations

import pytest

from trustlab.agents.checkers import CheckContext
from trustlab.agents.policy import Action
from trustlab.agents.provenance import argument_mentioned, intent_mentions

COMPOSED, DECOMPOSED = "Zo\u00eb", "Zoe\u0308"


def _mentioned(intent: str, value: str) -> bool:
    action = Action(name="send_money", arguments={"recipient": value})
    return argument_mentioned("recipient")(CheckContext((), action, task_intent=intent))


@pytest.mark.parametrize(("said", "given"), [(COMPOSED, DECOMPOSED), (DECOMPOSED, COMPOSED)])
def test_the_same_name_in_either_form_is_mentioned(said, given):
    assert _mentioned(f"Pay {said} back.", given)


def test_a_shorter_name_is_not_found_inside_a_decomposed_one():
    assert not _mentioned(f"Pay {DECOMPOSED} back.", "Zoe")


def test_intent_mentions_words_in_either_form():
    check = intent_mentions(any_of=[f"{DECOMPOSED}s"])
    ctx = CheckContext((), Action(name="x"), task_intent=f"Update {COMPOSED}s password")
    assert check(ctx)

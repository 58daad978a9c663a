"""Names typed with an accented letter composed in one answers file and decomposed in another
("Zoë" as U+00EB, or "e" + U+0308): the same assessor scored as two (a duplicated respondent),
and the same system was refused as two, the message showing one name twice."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.governance import assess

COMPOSED, DECOMPOSED = "Zo\u00eb", "Zoe\u0308"


def _answers(name: str, system: str = "s") -> dict:
    return {
        "kind": "participation-answers",
        "questionnaire_version": "1.0.0",
        "system": system,
        "assessor": {"name": name, "perspective": "self"},
        "answers": {"data.planning": {"rung": 3, "evidence": {"public_document": "x"}}},
    }


def test_one_assessor_with_a_decomposed_accent_is_a_duplicate():
    with pytest.raises(InputError, match="two from assessor .*Unicode form"):
        assess([_answers(COMPOSED), _answers(DECOMPOSED.upper())])


def test_one_system_with_a_decomposed_accent_is_one_system():
    result = assess([_answers("a", f"{COMPOSED} bot"), _answers("b", f"{DECOMPOSED} bot")])
    assert result.system == f"{COMPOSED} bot" and len(result.assessors) == 2
    with pytest.raises(InputError, match="one system"):  # another system is still refused
        assess([_answers("a", "Zoe bot"), _answers("b", f"{COMPOSED} bot")])

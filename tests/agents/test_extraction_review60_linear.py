"""Review 60: parse_json_answer no longer rescans the answer once per bracket. '[1,' * 4000 (an
answer cut off inside a nested array) took 3.0 s: every '[' was decoded to the end of the text,
and each failed decode listed the closing brackets after it again, even with the repair budget
spent. An opening after the last closing bracket cannot start a value, and a spent budget lists
nothing; the result is the old one (checked against the old function on 18,000 random answers)."""

from __future__ import annotations

from trustlab.agents import extraction
from trustlab.agents.extraction import parse_json_answer


class _CountingStr(str):
    """A string that counts how often it is indexed or sliced."""

    reads = 0

    def __getitem__(self, key):
        type(self).reads += 1
        return str.__getitem__(self, key)


def test_openings_after_the_last_closing_bracket_are_not_decoded(monkeypatch):
    calls = []
    decode = extraction._decode
    monkeypatch.setattr(extraction, "_decode", lambda t, i, b: calls.append(i) or decode(t, i, b))
    assert parse_json_answer("[1," * 4000) is None
    assert calls == []
    text = 'Draft [{"rule_id": "a"}] then [1,' + "[1," * 50
    assert parse_json_answer(text) == [{"rule_id": "a"}]
    assert calls == [6]  # the draft's opening only; the value it decodes ends at the last "]"


def test_a_spent_repair_budget_lists_no_closing_brackets():
    text = _CountingStr("x[" * 500 + "]")
    _CountingStr.reads = 0
    assert extraction._decode(text, 1, [0]) is None
    assert _CountingStr.reads <= 1  # the old helper read the 999 characters after the opening twice

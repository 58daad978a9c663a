"""A saved JSON-lines prompt file whose text holds U+2028, U+2029 or NEL reads back (review 65).
NeutralityPrompts.save writes them raw (json.dumps with ensure_ascii=False, as JSON allows);
load_prompts split the file with str.splitlines(), which also breaks lines there, so its own
file was refused ("path: expected one JSON object a line, got 'line 1: Unterminated string'")."""

from __future__ import annotations

import dataclasses

import pytest

from trustlab.safety.neutrality import NeutralityPrompts, load_prompts, own_prompts


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_saved_prompt_with_a_unicode_line_separator_reads_back(tmp_path, separator):
    records = [dict(r) for r in own_prompts().records[:2]]
    records[0]["input"] = f"Is voting by mail allowed?{separator}Answer briefly."
    prompts = NeutralityPrompts(tuple(records), origin="test")
    path = prompts.save(tmp_path / "prompts.jsonl")
    back = load_prompts(path)
    assert [r["input"] for r in back.records] == [r["input"] for r in records]
    assert dataclasses.replace(back, origin="test") == prompts


def test_windows_line_ends_still_read(tmp_path):
    path = own_prompts().subset(per_task=1).save(tmp_path / "prompts.jsonl")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert len(load_prompts(path)) == 9

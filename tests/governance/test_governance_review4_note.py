"""Review 4 of the participation assessment: an answers file's top-level ``note`` reaches the
outputs (escaped), and the docs page says how the pooled rung is taken."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_main

ANSWERS = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\n"
    "note: |\n  Answered from the <b>2025</b> minutes.\n  # not a heading\n"
    "answers:\n  data.planning:\n    rung: 2\n"
    "    evidence: {assessor_statement: a notice was published}\n"
)
SHOWN = "Note from a: Answered from the <b>2025</b> minutes. # not a heading"


def test_the_top_level_note_reaches_every_output(tmp_path, capsys):
    from markdown_it import MarkdownIt

    from trustlab.governance import assess, markdown_report, report_parts

    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS, encoding="utf-8")
    result = assess(path)
    assert result.assessors[0]["note"].startswith("Answered from the <b>2025</b> minutes.")
    profile = {p["id"]: p for p in report_parts(result)}["profile"]
    assert (SHOWN, "text") in profile["paragraphs"]
    html = MarkdownIt("commonmark").render(markdown_report(result))
    assert "Answered from the &lt;b&gt;2025&lt;/b&gt; minutes. # not a heading" in html
    assert "<b>2025" not in html and "<h1>not a heading" not in html
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", path, "--out", out], capsys)
    assert code == 0, err
    saved = json.loads((out / "result.json").read_text())
    assert saved["assessors"][0]["note"] == result.assessors[0]["note"]
    page = (out / "participation.html").read_text()
    assert "Answered from the &lt;b&gt;2025&lt;/b&gt; minutes." in page


def test_a_blank_or_absent_note_adds_nothing(tmp_path):
    from trustlab.governance import assess, report_parts

    for note in ("note: '  '\n", ""):
        path = tmp_path / "b.yaml"
        path.write_text(
            ANSWERS.replace(ANSWERS[ANSWERS.index("note:") : ANSWERS.index("answers:")], note)
        )
        result = assess(path)
        assert result.assessors[0]["note"] is None
        profile = {p["id"]: p for p in report_parts(result)}["profile"]
        assert not any(text.startswith("Note from") for text, _ in profile["paragraphs"])


def test_the_page_says_the_pooled_rung_is_over_credited_assessors_only():
    page = Path(__file__).resolve().parents[2] / "docs" / "governance-participation.md"
    text = " ".join(page.read_text().split())
    assert "lower median" in text and "credited assessors only" in text

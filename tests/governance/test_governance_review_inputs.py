"""Review 3 of the participation assessment: odd answers files, and what the outputs keep."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main

HEAD = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML parses these, then its constructor raises ValueError (not a YAMLError)
        ("date: 2026-13-45\nanswers: {}\n", "month must be in 1..12"),
        ("date: 2026-02-30\nanswers: {}\n", "day is out of range for month"),
        ("answers:\n  data.planning: {rung: !!int x}\n", "a value YAML cannot read"),
        # an alias inside itself: the date conversion recursed without end
        ("answers: {}\nextra: &x [*x]\n", "self-referencing alias"),
    ],
)
def test_unreadable_yaml_values_exit_2_with_one_line(tmp_path, capsys, text, expected):
    path = tmp_path / "odd.yaml"
    path.write_text(HEAD + text)
    for command in (["governance", "assess", path], ["governance", "validate", path]):
        code, _, err = run_main(command, capsys)
        line = one_line(err)
        assert code == 2, err
        assert line.startswith("trustlab: error: ") and "odd.yaml" in line and expected in line


ODD_TEXT = (
    'system: "S <b>bold</b> | pipe"\n'
    'assessor: {name: "A <script>alert(1)</script>", role: "r <i>", perspective: self}\n'
    "answers:\n"
    "  data.planning:\n"
    "    rung: 4\n"
    "    evidence: {public_document: 'https://example.org/notice?a=1&b=<x>'}\n"
    "    note: 'read with the minutes | see <annex>'\n"
    "  redress.operating:\n"
    "    rung: 2\n"
    "    evidence: {assessor_statement: no appeal route exists}\n"
)


def _odd_files(tmp_path):
    path = tmp_path / "odd.yaml"
    path.write_text(
        "kind: participation-answers\nquestionnaire_version: 1.0.0\n" + ODD_TEXT, encoding="utf-8"
    )
    return path


def test_every_output_keeps_the_evidence_given_and_the_notes(tmp_path, capsys):
    import json

    from trustlab.governance import assess, report_parts

    result = assess(_odd_files(tmp_path))
    items = {it["id"]: it for d in result.dimensions for it in d["items"]}
    assert items["data.planning"]["evidence"] == {
        "A <script>alert(1)</script>": {"public_document": "https://example.org/notice?a=1&b=<x>"}
    }
    assert items["data.planning"]["notes"] == {
        "A <script>alert(1)</script>": "read with the minutes | see <annex>"
    }
    part = {p["id"]: p for p in report_parts(result)}["evidence-given"]
    rows = part["tables"][0][1]
    assert [r[1:5] for r in rows] == [
        ["data.planning", "A <script>alert(1)</script>", 4, "3"],
        ["redress.operating", "A <script>alert(1)</script>", 2, "2"],
    ]
    assert rows[1][5] == "assessor_statement: no appeal route exists"
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", tmp_path / "odd.yaml", "--out", out], capsys)
    assert code == 0, err
    saved = json.loads((out / "result.json").read_text())
    assert saved["dimensions"][0]["items"][0]["notes"] == items["data.planning"]["notes"]
    html = (out / "participation.html").read_text()
    assert "https://example.org/notice?a=1&amp;b=&lt;x&gt;" in html
    assert "read with the minutes | see &lt;annex&gt;" in html
    assert "no appeal route exists" in (out / "participation.md").read_text()


def test_markdown_report_turns_no_user_text_into_html(tmp_path):
    from markdown_it import MarkdownIt  # rich's (typer's) dependency

    from trustlab.governance import assess, markdown_report

    text = markdown_report(assess(_odd_files(tmp_path)))
    html = MarkdownIt("commonmark").enable("table").render(text)
    for tag in ("<script", "<b>", "<i>", "<annex", "<x>"):
        assert tag not in html, tag
    for shown in ("A &lt;script&gt;alert(1)&lt;/script&gt;", "S &lt;b&gt;bold&lt;/b&gt; | pipe",
                  "see &lt;annex&gt;"):  # fmt: skip
        assert shown in html, shown


def test_report_tells_an_unanswered_item_from_one_credited_no_rung(tmp_path):
    from trustlab.governance import assess, report_parts

    head = "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    files = []
    for name, answers in (
        ("doc", "  data.planning: {rung: 3, evidence: {public_document: https://x}}\n"),
        ("claim", "  data.planning: {rung: 4, evidence: {consultation_record: minutes}}\n"),
        ("blank", "  redress.planning: {rung: 2, evidence: {assessor_statement: none}}\n"),
    ):
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            head + f"assessor: {{name: {name}, perspective: self}}\nanswers:\n{answers}"
        )
        files.append(path)
    parts = {p["id"]: p for p in report_parts(assess(files))}
    profile = parts["profile"]["tables"][0][1]
    assert profile[0][0] == "Data collection and ownership"
    assert profile[0][5:8] == ["3", "no rung credited", "not answered"]
    flagged = parts["agreement"]["tables"][1][1]
    assert flagged == [["data.planning", "3", "no rung credited", "not answered"]]


def test_a_file_of_another_kind_is_named_as_such(tmp_path, capsys):
    from trustlab.governance import EXAMPLE_ANSWERS, data_path

    answers, tiers = data_path(EXAMPLE_ANSWERS[0]), data_path("tiers.yaml")
    for command, expected in (
        (["--tiers", answers], "expected a participation-tiers file (kind: participation-tiers), "
         "got at kind: 'participation-answers'"),
        (["--questionnaire", answers], "expected a participation-questionnaire file"),
        ([], "expected a participation-answers file (kind: participation-answers), "
         "got at kind: 'participation-tiers'"),
    ):  # fmt: skip
        first = answers if command else tiers
        code, _, err = run_main(["governance", "assess", first, *command], capsys)
        assert code == 2 and expected in one_line(err)


@pytest.mark.parametrize("field", ["system", "assessor name"])
def test_a_blank_system_or_assessor_name_is_refused(tmp_path, capsys, field):
    """A system of spaces became the report's (empty) title; an assessor of spaces a blank
    column."""
    system, name = ('"  "', "a") if field == "system" else ("s", '"  "')
    path = tmp_path / "blank.yaml"
    path.write_text(
        f"kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: {system}\n"
        f"assessor: {{name: {name}, perspective: self}}\nanswers: {{}}\n"
    )
    code, _, err = run_main(["governance", "assess", path, "--out", tmp_path / "o"], capsys)
    assert code == 2, err
    assert one_line(err).endswith("'  ' is blank")
    assert not (tmp_path / "o").exists()

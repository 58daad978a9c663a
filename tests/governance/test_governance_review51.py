"""Review 5 of the participation assessment: user text in participation.md stays text even when
it puts a backslash before a tag or a pipe."""

from __future__ import annotations

ANSWERS = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\n"
    'system: "S \\\\<img src=x onerror=alert(1)>"\n'
    'assessor: {name: "a \\\\<script>alert(2)</script>", perspective: self}\n'
    "answers:\n  data.planning:\n    rung: 1\n"
    '    evidence: {assessor_statement: "left\\\\|right"}\n'
    '    note: "q \\\\<u>y</u>"\n'
)


def test_a_backslash_before_a_tag_does_not_undo_the_markdown_escape(tmp_path):
    from markdown_it import MarkdownIt  # rich's (typer's) dependency

    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS, encoding="utf-8")
    result = assess(path)
    assert result.system == "S \\<img src=x onerror=alert(1)>"
    html = MarkdownIt("commonmark").enable("table").render(markdown_report(result))
    for tag in ("<img", "<script", "<u>"):
        assert tag not in html, tag
    for shown in (
        "S \\&lt;img src=x onerror=alert(1)&gt;",
        "a \\&lt;script&gt;alert(2)&lt;/script&gt;",
        "q \\&lt;u&gt;y&lt;/u&gt;",
        "<td>assessor_statement: left\\|right</td>",  # one cell: the pipe did not split it
    ):
        assert shown in html, shown

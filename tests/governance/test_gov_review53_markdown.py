"""Review 53 of the participation assessment: Markdown markup in an answers file's text (names,
system, role, notes, evidence) is shown as written in participation.md, not rendered."""

from __future__ import annotations

import html

HOSTILE = {
    "system": "*Bold* _sys_ `code` [link](http://evil.example) &amp; ~~gone~~",
    "name": "# A*B*C | x",
    "role": "role_with__under__scores",
    "note": "[click](javascript:alert(1)) ![img](http://x/y.png) &copy;",
    "evidence": "a | b `c|d` **e** [f]: http://x",
    "item_note": "# not heading <b>x</b> __y__",
}


def _answers() -> str:
    h = HOSTILE
    return (
        "kind: participation-answers\nquestionnaire_version: 1.0.0\n"
        f"system: '{h['system']}'\n"
        f"assessor: {{name: '{h['name']}', role: '{h['role']}', perspective: self}}\n"
        f"note: '{h['note']}'\n"
        "answers:\n  data.planning:\n    rung: 1\n"
        f"    evidence: {{assessor_statement: '{h['evidence']}'}}\n"
        f"    note: '{h['item_note']}'\n"
    )


def test_markdown_markup_in_answers_text_is_shown_as_written(tmp_path):
    from markdown_it import MarkdownIt  # rich's (typer's) dependency

    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(_answers(), encoding="utf-8")
    result = assess(path)
    assert result.system == HOSTILE["system"]
    text = markdown_report(result)
    n_tables = sum(line.startswith("|---") for line in text.splitlines())
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    # the only markup is the report's own: table captions in italics, one bold 'Warning:'
    assert rendered.count("<em>") == n_tables
    assert rendered.count("<strong>") == rendered.count("<strong>Warning:</strong>")
    for tag in ("<code>", "<a ", "<img", "<s>", "<b>", "©"):
        assert tag not in rendered, tag
    assert rendered.count("<h1>") == 1
    for key, value in HOSTILE.items():
        shown = html.escape(value, quote=False)
        if key == "evidence":
            shown = "assessor_statement: " + shown
        assert shown in rendered, (key, shown)

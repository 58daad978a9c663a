"""Review 5 of the participation assessment: user text in participation.md stays text even when
it puts a backslash before a tag or a pipe; notes and tier provenance are not dropped or
overstated; the reliability helpers refuse repeated categories."""

from __future__ import annotations

import numpy as np

from cli_helpers import run_main

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


def test_a_note_on_an_item_without_a_rung_is_refused_not_dropped(tmp_path, capsys):
    head = (
        "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
        "assessor: {name: a, perspective: self}\nanswers:\n"
    )
    path = tmp_path / "a.yaml"
    path.write_text(head + "  data.planning: {rung: null, note: 'not applicable: no data'}\n")
    code, _, err = run_main(["governance", "assess", path], capsys)
    assert code == 2
    assert "item 'data.planning': expected a rung for the note given, got none" in err
    path.write_text(head + "  data.planning: {rung: null, note: '  '}\n")  # blank: nothing lost
    code, _, err = run_main(["governance", "validate", path], capsys)
    assert code == 0, err


def test_a_tiers_table_cannot_claim_verified_while_its_tiers_are_not(tmp_path, capsys):
    from trustlab.governance import EXAMPLE_ANSWERS, data_path

    shipped = data_path("tiers.yaml").read_text(encoding="utf-8")
    assert "\nverified: false\n" in shipped
    path = tmp_path / "t.yaml"
    path.write_text(shipped.replace("\nverified: false\n", "\nverified: true\n"))
    code, _, err = run_main(
        ["governance", "assess", data_path(EXAMPLE_ANSWERS[0]), "--tiers", path], capsys
    )
    assert code == 2
    assert "verified: expected false while tiers ['T1', 'T2', 'T3', 'T4'] say" in err
    path.write_text(shipped.replace("verified: false", "verified: true"))  # every tier checked
    code, out, err = run_main(
        ["governance", "assess", data_path(EXAMPLE_ANSWERS[0]), "--tiers", path], capsys
    )
    assert code == 0, err
    assert "UNVERIFIED" not in out


def test_ratings_table_refuses_repeated_or_non_numeric_categories():
    import pytest

    from trustlab.errors import InputError
    from trustlab.governance.reliability import fleiss_kappa, ratings_table

    agree = [[1, 1], [1, 1]]
    assert np.isnan(fleiss_kappa(ratings_table(agree, categories=[1, 2])))
    with pytest.raises(InputError, match="categories: expected distinct rating values"):
        ratings_table(agree, categories=[1, 1, 2])  # counted each rating twice: kappa -1/3
    with pytest.raises(InputError, match="categories: expected the rating values"):
        ratings_table(agree, categories=["low", 1])


def test_fleiss_kappa_of_no_complete_unit_is_nan_as_documented():
    from trustlab.governance.reliability import fleiss_kappa, ratings_table

    table = ratings_table([[1, np.nan], [np.nan, 2]])  # no unit rated by both
    assert table.shape[0] == 0
    assert np.isnan(fleiss_kappa(table))


def test_assess_takes_any_iterable_of_files_and_names_a_wrong_type(tmp_path):
    import shutil

    import pytest

    from trustlab.errors import InputError
    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path

    for name in EXAMPLE_ANSWERS:
        shutil.copyfile(data_path(name), tmp_path / name)
    result = assess(sorted(tmp_path.glob("*.yaml")))
    assert assess(tmp_path.glob("*.yaml")).profile == result.profile
    assert len(result.assessors) == 3
    with pytest.raises(InputError, match=r"answers\[0\]: expected an answers file's path"):
        assess([42])
    with pytest.raises(InputError, match="answers: expected a path, mapping or Answers"):
        assess(42)


def test_a_multi_line_question_keeps_the_blank_file_valid_yaml(tmp_path, capsys):
    import yaml

    from trustlab.governance import data_path

    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    doc["items"][0]["question"] = "Who decides\nwhat data: are collected?"
    doc["items"][0]["options"][0]["text"] = "Nobody.\nreally: nobody"
    doc["evidence_kinds"][0]["description"] = "a statement\nsigned: by the assessor"
    source = tmp_path / "q.yaml"
    source.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    blank = tmp_path / "blank.yaml"
    code, _, err = run_main(
        ["governance", "questionnaire", "--questionnaire", source, "--out", blank], capsys
    )
    assert code == 0, err
    text = blank.read_text(encoding="utf-8")
    assert "] Who decides what data: are collected?\n" in text
    assert "#   1: Nobody. really: nobody (evidence:" in text
    filled = yaml.safe_load(text)  # the comments stay comments
    assert filled["answers"]["data.planning"] == {"rung": None, "evidence": {}, "note": None}
    assert sorted(filled) == sorted(
        ["kind", "questionnaire_version", "system", "assessor", "date", "answers"]
    )


def test_a_users_own_unverified_tiers_are_not_called_the_shipped_placeholder(tmp_path):
    import yaml

    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path, report_parts

    doc = yaml.safe_load(data_path("tiers.yaml").read_text(encoding="utf-8"))
    doc["source"] = "my transcription, page 4"
    doc["tiers"] = [
        {"id": "lo", "label": "Low", "name": "consumer", "rungs": [1, 2, 3, 4], "verified": False},
        {"id": "hi", "label": "High", "name": "citizen", "rungs": [5, 6, 7, 8], "verified": False},
    ]
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    answers = data_path(EXAMPLE_ANSWERS[0])

    def warning(result):
        profile = {p["id"]: p for p in report_parts(result)}["profile"]
        return [text for text, kind in profile["paragraphs"] if "UNVERIFIED" in text]

    own = assess(answers, tiers=path)
    [text] = warning(own)
    assert "my transcription, page 4" in text
    assert "two rungs per tier" not in text and "carry no names" not in text
    assert "UNVERIFIED table (see docs)" in own.summary()
    shipped = assess(answers)
    [text] = warning(shipped)
    assert "two rungs per tier" in text
    assert "UNVERIFIED placeholder table" in shipped.summary()


def test_a_line_break_in_a_name_or_role_makes_no_markdown_block(tmp_path):
    from markdown_it import MarkdownIt

    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(
        "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
        'assessor: {name: "a\\n# Fake heading", role: "r\\n\\n> quote", perspective: self}\n'
        "answers: {data.planning: {rung: 1, evidence: {assessor_statement: x}}}\n",
        encoding="utf-8",
    )
    text = markdown_report(assess(path))
    assert "Assessors: a # Fake heading (self, r > quote)." in text
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<h1>Fake heading" not in html and "<blockquote>\n<p>quote" not in html


def test_the_audit_section_does_not_call_an_own_tiers_table_a_placeholder(tmp_path):
    from types import SimpleNamespace

    import yaml

    from trustlab.audit.sections import participation as section
    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path

    doc = yaml.safe_load(data_path("tiers.yaml").read_text(encoding="utf-8"))
    doc["tiers"][0]["name"] = "consumer involvement"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    answers = data_path(EXAMPLE_ANSWERS[0])
    own = section.build(SimpleNamespace(participation=assess(answers, tiers=path)))
    assert own.summary.endswith("The rung->tier table used is unverified.")
    shipped = section.build(SimpleNamespace(participation=assess(answers)))
    assert shipped.summary.endswith("Tier labels and boundaries are unverified placeholders.")

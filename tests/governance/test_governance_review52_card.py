"""Review 5.2 of the participation assessment: the participation card (card.json) carries the
evidence each credited rung rests on and the assessors' notes (it had credited rungs with no
pointer to any evidence, while the docs promise every credited rung points to evidence); a
``file:`` reference after a symlinked folder is shown as the file that was checked; a ``$`` in
the files' texts draws as written in the ladder chart (no mathtext); a trailing `` #`` in the
system stays in the Markdown heading; a next tier that no option of the questionnaire reaches
is said to be out of reach; tiers= or questionnaire= of a wrong type is refused naming it; one fictitious answers file among real
ones is named instead of calling every answer fictitious; the evidence tables say 'no rung
credited', not 'n/a'; a carriage return in the files' text no longer ends a Markdown table row
or the heading."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main

ANSWERS = """kind: participation-answers
questionnaire_version: 1.0.0
system: S
assessor: {name: A, perspective: external}
note: about the whole file
answers:
  data.planning:
    rung: 4
    evidence: {public_document: "https://example.org/notice", consultation_record: file:ev/m.txt}
    note: minutes signed
  redress.operating:
    rung: 5
    evidence: {consultation_record: only this}
"""


def test_card_carries_the_evidence_and_notes_as_written(tmp_path, capsys):
    from trustlab.governance import validate_card

    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "m.txt").write_text("x", encoding="utf-8")
    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS, encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    validate_card(card)
    assert card["card_version"] == "1.1.0"
    assert card["assessment"]["assessors"][0]["note"] == "about the whole file"
    by_dim = {d["dimension"]: d for d in card["profile"]}
    assert by_dim["data"]["evidence"] == [
        {"item": "data.planning", "assessor": "A", "claimed": 4, "credited": 4,
         "evidence": {"public_document": "https://example.org/notice",
                      "consultation_record": "file:ev/m.txt"},
         "note": "minutes signed"}
    ]  # fmt: skip
    # claimed 5 with one of its three kinds: credited none, and the card says what was given
    assert by_dim["redress"]["evidence"] == [
        {"item": "redress.operating", "assessor": "A", "claimed": 5, "credited": None,
         "evidence": {"consultation_record": "only this"}, "note": None}
    ]  # fmt: skip
    assert by_dim["design"]["evidence"] == []  # nothing answered there


def test_a_card_of_version_1_0_0_without_evidence_stays_valid():
    from trustlab.governance import (
        EXAMPLE_ANSWERS,
        assess,
        data_path,
        participation_card,
        validate_card,
    )

    card = participation_card(assess(data_path(EXAMPLE_ANSWERS[0])))
    card["card_version"] = "1.0.0"
    for dim in card["profile"]:
        del dim["evidence"]
    for assessor in card["assessment"]["assessors"]:
        del assessor["note"]
    validate_card(card)


def test_file_evidence_after_a_symlinked_folder_is_shown_as_the_file_checked(tmp_path, capsys):
    # answers in work/link (-> real/sub) name file:../doc.txt: the check opened real/doc.txt;
    # the page showed work/doc.txt (abspath drops 'link/..'), a file that does not exist
    import os

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "doc.txt").write_text("x", encoding="utf-8")
    (tmp_path / "work").mkdir()
    os.symlink(tmp_path / "real" / "sub", tmp_path / "work" / "link")
    path = tmp_path / "work" / "link" / "a.yaml"
    path.write_text(
        ANSWERS.split("answers:")[0]
        + "answers:\n  data.planning:\n    rung: 3\n    evidence: {public_document: file:../doc.txt}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    text = (out / "participation.md").read_text(encoding="utf-8")
    shown = text.split("public_document: file:")[1].split(" ")[0]
    assert os.path.isfile(shown) and os.path.samefile(shown, tmp_path / "real" / "doc.txt")


@pytest.mark.parametrize(
    ("system", "name"), [(r"Pricing $\frac{a}$ bot", r"A $\alpha_$ b"), ("$5 to $10 bot", "A $x$")]
)
def test_dollar_signs_in_the_files_texts_draw_as_written(tmp_path, capsys, system, name):
    # a '$' pair started matplotlib's mathtext: '$\frac{a}$' ended as 'unexpected failure:
    # ValueError' (exit 1, nothing written), '$5 to $10' came out as math italics
    from matplotlib.figure import Figure

    from trustlab.governance import assess

    path = tmp_path / "a.yaml"
    body = ANSWERS.replace("system: S", f"system: '{system}'").replace("name: A", f"name: '{name}'")
    path.write_text(body.replace(", consultation_record: file:ev/m.txt", ""), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", str(path), "--out", str(out)], capsys)
    assert code == 0, err
    assert (out / "participation.html").is_file()
    figure = Figure()
    ax = assess(path).plot(ax=figure.add_subplot())
    figure.canvas.draw()
    texts = [ax.title, *ax.get_legend().get_texts(), *ax.texts, *ax.get_xticklabels()]
    assert all(not t.get_parse_math() for t in texts)
    assert ax.get_title() == f"Participation profile: {system}"


@pytest.mark.parametrize("system", ["Bot #", "Bot ##", "#", "Bot \\ #"])
def test_a_trailing_hash_in_the_system_stays_in_the_markdown_heading(tmp_path, system):
    # '# Participation assessment: Bot #' closed the ATX heading: it rendered 'Bot'
    from markdown_it import MarkdownIt  # rich's (typer's) dependency

    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    body = ANSWERS.replace("system: S", f"system: '{system}'")
    path.write_text(body.replace(", consultation_record: file:ev/m.txt", ""), encoding="utf-8")
    html = MarkdownIt("commonmark").render(markdown_report(assess(path)).splitlines()[0])
    assert html.strip() == f"<h1>Participation assessment: {system}</h1>"


def test_a_next_tier_no_option_reaches_says_so(tmp_path):
    # a questionnaire of one's own whose data items stop at rung 4: the report read 'rung to
    # reach: 5 placation' with no evidence needed, as if Tier 3 were reachable with nothing
    import yaml

    from trustlab.governance import assess, data_path, load_questionnaire, markdown_report

    document = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    for item in document["items"]:
        if item["dimension"] == "data":
            item["options"] = [o for o in item["options"] if o["rung"] <= 4]
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    q = load_questionnaire(tmp_path / "q.yaml")
    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS.split("answers:")[0] + "answers:\n" + ONE_DATA, encoding="utf-8")
    result = assess(path, questionnaire=q)
    assert result.dimension("data")["next_step"]["options"] == []
    lines = markdown_report(result).split("*The next tier up*")[1].splitlines()
    row = next(r for r in lines if r.startswith("| Data coll"))
    cells = [c.strip() for c in row.split(" | ")]
    assert cells[3] == "5 placation (no item of this dimension offers an option at or above it)"
    assert cells[4] == "none: out of reach with this questionnaire"
    # a dimension that offers the next tier still lists its evidence
    row = next(r for r in lines if r.startswith("| Design"))
    assert "out of reach" not in row and "assessor_statement" in row


ONE_DATA = (
    "  data.planning:\n    rung: 4\n    evidence: {public_document: x, consultation_record: y}\n"
)


@pytest.mark.parametrize(
    ("keyword", "value"),
    [("tiers", {"kind": "participation-tiers"}), ("tiers", 3), ("questionnaire", 42)],
)
def test_tiers_or_questionnaire_of_a_wrong_type_is_refused_naming_it(keyword, value):
    # assess(tiers={...}) ended as a bare TypeError from Path()
    from trustlab.errors import InputError
    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path

    with pytest.raises(InputError, match=f"^{keyword}: expected a {keyword} YAML file's path"):
        assess(data_path(EXAMPLE_ANSWERS[0]), **{keyword: value})


def test_one_fictitious_file_among_real_ones_is_named(tmp_path):
    # the warning said 'These answers are a fictitious worked example' of every answer
    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(
        ANSWERS.replace("system: S", "system: 'trustlab demo audit (default model zoo on the "
                        "bundled chile data)'").replace(", consultation_record: file:ev/m.txt", ""),
        encoding="utf-8",
    )  # fmt: skip
    text = markdown_report(assess([path, data_path(EXAMPLE_ANSWERS[0])]))
    assert "These answers are a fictitious worked example" not in text
    assert "The answers of Demo developer (fictitious) are fictitious (a worked example)" in text
    text = markdown_report(assess([data_path(n) for n in EXAMPLE_ANSWERS]))
    assert "These answers are a fictitious worked example, not a real assessment." in text


def test_an_answer_credited_no_rung_says_so_in_the_evidence_tables(tmp_path):
    # the missing-evidence and evidence-given tables showed 'n/a' in the credited column
    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS.replace(", consultation_record: file:ev/m.txt", ""), encoding="utf-8")
    text = markdown_report(assess(path))
    rows = [r for r in text.splitlines() if "| redress.operating |" in r]
    assert len(rows) == 2  # missing evidence, evidence given
    assert all("| 5 | no rung credited |" in r for r in rows) and "n/a" not in "".join(rows)
    assert "or with no rung when there was none." in text


@pytest.mark.parametrize("brk", ["\\r", "\\u2028", "\\r\\n"])
def test_a_carriage_return_in_the_files_text_stays_inside_its_markdown_cell(tmp_path, brk):
    # a lone '\r' (a quoted "\r" in the YAML) ended the table row: '# Injected' became a heading
    from markdown_it import MarkdownIt  # rich's (typer's) dependency

    from trustlab.governance import assess, markdown_report

    path = tmp_path / "a.yaml"
    path.write_text(
        ANSWERS.split("answers:")[0].replace("system: S", f'system: "S{brk}# Title"')
        + f'answers:\n  data.planning: {{rung: 3, evidence: {{public_document: "d{brk}# Injected"}},'
        f' note: "n{brk}<b>x</b>"}}\n',
        encoding="utf-8",
    )
    html = MarkdownIt("commonmark").enable("table").render(markdown_report(assess(path)))
    assert html.count("<h1>") == 1 and "<h1>Participation assessment: S # Title</h1>" in html
    assert "<td>public_document: d # Injected</td>" in html and "<b>" not in html

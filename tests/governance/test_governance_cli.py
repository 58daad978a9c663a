"""``trustlab governance`` commands, the report files and the audit's participation section."""

from __future__ import annotations

import json
from types import SimpleNamespace

import jsonschema
import pandas as pd
import pytest
import yaml

from cli_helpers import one_line, run_main
from trustlab.audit.sections import participation as participation_section
from trustlab.errors import InputError
from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path, markdown_report
from trustlab.governance.questionnaire import schema


def test_questionnaire_example_and_validate(tmp_path, capsys):
    blank = tmp_path / "blank.yaml"
    code, _, _ = run_main(["governance", "questionnaire", "--out", blank], capsys)
    assert code == 0 and "data.planning:" in blank.read_text()
    code, out, _ = run_main(["governance", "questionnaire"], capsys)
    assert code == 0 and out == blank.read_text()
    code, _, _ = run_main(["governance", "example", "--out", tmp_path / "ex"], capsys)
    files = [tmp_path / "ex" / name for name in EXAMPLE_ANSWERS]
    assert code == 0 and all(f.is_file() for f in files)
    code, out, _ = run_main(["governance", "validate", files[0], "--json"], capsys)
    assert code == 0 and json.loads(out) == {
        "path": str(files[0]), "kind": "participation-answers", "valid": True
    }  # fmt: skip


def test_assess_writes_the_report_and_a_valid_card(tmp_path, capsys):
    files = [data_path(name) for name in EXAMPLE_ANSWERS]
    code, out, err = run_main(["governance", "assess", *files, "--out", tmp_path / "r", "--json"],
                              capsys)  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["profile"] == assess(files).to_dict()["profile"]
    written = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert written == ["card.json", "participation.html", "participation.md", "result.json"]
    card = json.loads((tmp_path / "r" / "card.json").read_text())
    jsonschema.validate(card, schema("card.schema.json"))
    code, out, _ = run_main(["governance", "validate", tmp_path / "r" / "card.json"], capsys)
    assert code == 0 and "participation-card" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("answers:\n  nowhere.item: {rung: 3}\n", "item 'nowhere.item'"),
        ("answers:\n  data.planning: {rung: 12}\n", "item 'data.planning': expected a rung in 1..8"),
        ("answers:\n  data.planning: {rung: 3, evidence: {public_document: ''}}\n",
         "item 'data.planning': evidence 'public_document' is claimed but missing"),
        ("answers:\n  data.planning: {rung: 3\n", "syntax error at line"),
        # the last one silently won: a rung-6 claim with its evidence was dropped
        ("answers:\n  data.planning: {rung: 6}\n  data.planning: {rung: 1}\n",
         "got 'data.planning' twice (line 6 and line 7)"),
        ("answers:\n  data.planning:\n    rung: 3\n    evidence: {public_document: a, "
         "public_document: b}\n", "got 'public_document' twice (line 8 and line 8)"),
    ],
)  # fmt: skip
def test_bad_answers_exit_2_with_one_line(tmp_path, capsys, text, expected):
    head = (
        "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
        "assessor: {name: a, perspective: self}\n"
    )
    path = tmp_path / "bad.yaml"
    path.write_text(head + text)
    for command in (["governance", "assess", path], ["governance", "validate", path]):
        code, _, err = run_main(command, capsys)
        assert code == 2
        line = one_line(err)
        assert line.startswith("trustlab: error: ") and expected in line
    if "syntax" in expected:
        assert "line 6" in line  # the unclosed mapping, reported where the file ends


def test_markdown_and_html_reports_say_what_they_are(tmp_path):
    result = assess([data_path(name) for name in EXAMPLE_ANSWERS])
    text = markdown_report(result)
    for heading in ("Participation profile", "Missing evidence", "Moving up a tier",
                    "Agreement between assessors", "Rung-to-tier table"):  # fmt: skip
        assert f"## {heading}" in text
    assert "UNVERIFIED" in text and "does not measure democratic legitimacy" in text
    assert (
        "| Data collection and ownership | 3 | informing | tokenism | Tier 2 (unverified) |" in text
    )
    assert "mushkani2025, Abstract" in text  # the recommendations carry their citation
    single = markdown_report(assess(data_path(EXAMPLE_ANSWERS[0])))
    assert "## Agreement between assessors" not in single


def test_audit_adds_the_participation_section(tmp_path):
    from trustlab.audit import run_audit

    table = pd.DataFrame({"y": ["a", "b"] * 20, "yhat": ["a", "b", "b", "a"] * 10,
                          "g": ["u", "u", "v", "v"] * 10})  # fmt: skip
    files = [data_path(name) for name in EXAMPLE_ANSWERS[:2]]
    result = run_audit(table, label="y", group="g", pred="yhat", out=tmp_path / "with",
                       sections=["overview", "participation"], participation=files)  # fmt: skip
    report = json.loads(result.json_path.read_text())
    assert [s["id"] for s in report["sections"]] == ["overview", "participation"]
    section = report["sections"][1]
    assert section["status"] == "ok" and section["data"]["card"]["kind"] == "participation-card"
    assert section["data"]["card"]["profile"][0]["assessor_rungs"] == {
        "Demo developer (fictitious)": 3, "External auditor (fictitious)": 3
    }  # fmt: skip
    assert "Participation (Right to AI)" in result.html_path.read_text()
    assert participation_section.build(SimpleNamespace(participation=None)) is None
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"kind": "participation-answers"}))
    # checked before any work
    with pytest.raises(InputError, match=r"^participation \(bad\.yaml\): "):
        run_audit(table, label="y", group="g", pred="yhat", out=tmp_path / "bad",
                  sections=["overview"], participation=[bad])  # fmt: skip
    assert not (tmp_path / "bad").exists()


def test_audit_cli_takes_repeatable_participation_files(tmp_path, capsys):
    table = pd.DataFrame({"y": ["a", "b"] * 20, "yhat": ["a", "b", "b", "a"] * 10,
                          "g": ["u", "u", "v", "v"] * 10})  # fmt: skip
    table.to_csv(tmp_path / "t.csv", index=False)
    args = ["audit", "--data", tmp_path / "t.csv", "--label", "y", "--group", "g", "--pred",
            "yhat", "--out", tmp_path / "out", "--yes"]  # fmt: skip
    for name in EXAMPLE_ANSWERS:
        args += ["--participation", data_path(name)]
    code, _, err = run_main(args, capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    card = next(s for s in report["sections"] if s["id"] == "participation")["data"]["card"]
    assert len(card["assessment"]["assessors"]) == 3
    (tmp_path / "bad.yaml").write_text("kind: participation-answers\nsystem: [\n")
    code, _, err = run_main([*args[:12], "--participation", tmp_path / "bad.yaml"], capsys)
    assert code == 2 and "syntax error at line" in one_line(err)


def test_an_unquoted_yaml_date_is_read_as_its_text(tmp_path, capsys):
    """``date: 2026-12-01`` is a date to YAML; the answers schema takes text: it is read as
    "2026-12-01" (it was refused as 'not of type string')."""
    text = data_path(EXAMPLE_ANSWERS[0]).read_text()
    lines = ["date: 2026-12-01" if line.startswith("date:") else line for line in text.splitlines()]
    assert "date: 2026-12-01" in lines
    path = tmp_path / "dated.yaml"
    path.write_text("\n".join(lines) + "\n")
    from trustlab.governance import load_answers

    assert load_answers(path).date == "2026-12-01"
    assert load_answers(yaml.safe_load(path.read_text())).date == "2026-12-01"
    code, _, err = run_main(["governance", "validate", path], capsys)
    assert code == 0, err


def test_questionnaire_and_example_never_replace_a_file_without_overwrite(tmp_path, capsys):
    """A filled-in answers file is not replaced by a blank one unless --overwrite; a folder as
    --out is one clear line (it was an 'unexpected failure')."""
    answers = tmp_path / "answers.yaml"
    answers.write_text("filled in\n")
    code, _, err = run_main(["governance", "questionnaire", "--out", answers], capsys)
    assert code == 2 and "--overwrite" in one_line(err) and answers.read_text() == "filled in\n"
    code, _, _ = run_main(["governance", "questionnaire", "--out", answers, "--overwrite"], capsys)
    assert code == 0 and "data.planning:" in answers.read_text()
    code, _, err = run_main(["governance", "questionnaire", "--out", tmp_path], capsys)
    assert code == 2 and one_line(err).startswith("trustlab: error: --out: expected a file path")
    folder = tmp_path / "ex"
    assert run_main(["governance", "example", "--out", folder], capsys)[0] == 0
    edited = folder / EXAMPLE_ANSWERS[0]
    edited.write_text("edited\n")
    code, _, err = run_main(["governance", "example", "--out", folder], capsys)
    assert code == 2 and "--overwrite" in one_line(err) and edited.read_text() == "edited\n"
    assert run_main(["governance", "example", "--out", folder, "--overwrite"], capsys)[0] == 0
    assert edited.read_text() == data_path(EXAMPLE_ANSWERS[0]).read_text()


def test_assess_never_replaces_results_without_overwrite(tmp_path, capsys):
    """A rerun of assess into the same --out, or into a folder holding another command's
    result.json, is refused unless --overwrite (it silently replaced them)."""
    files = [data_path(name) for name in EXAMPLE_ANSWERS]
    folder = tmp_path / "r"
    assert run_main(["governance", "assess", *files, "--out", folder], capsys)[0] == 0
    md = folder / "participation.md"
    md.write_text("edited\n")
    code, _, err = run_main(["governance", "assess", files[0], "--out", folder], capsys)
    assert code == 2 and "--overwrite" in one_line(err) and md.read_text() == "edited\n"
    code, _, err = run_main(["governance", "assess", files[0], "--out", folder, "--overwrite"],
                            capsys)  # fmt: skip
    assert code == 0, err
    assert md.read_text() != "edited\n"
    other = tmp_path / "dcp"
    other.mkdir()
    (other / "result.json").write_text('{"kind": "dcp"}')
    code, _, err = run_main(["governance", "assess", files[0], "--out", other], capsys)
    assert code == 2 and "result.json" in one_line(err)
    assert (other / "result.json").read_text() == '{"kind": "dcp"}'

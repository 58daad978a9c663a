"""Review 60: missing evidence: every kind the claimed option lacks, and a `file:` folder.

No test failed when the list was cut to its first kind (mutation ``sorted(...)[:1]``): the
fixtures here are hand-computed from the shipped questionnaire's evidence table
(docs/governance-participation.md): rung 8 needs decision_power_clause, decision_log and
resource_agreement; rung 6 membership_record, meeting_record and decision_power_clause.
"""

import json

import pytest

from trustlab.errors import InputError
from trustlab.governance import assess, load_answers, markdown_report, participation_card


def _answers(name, answers):
    return {
        "kind": "participation-answers",
        "questionnaire_version": "1.0.0",
        "system": "S",
        "assessor": {"name": name, "perspective": "external"},
        "answers": answers,
    }


def test_missing_evidence_lists_every_kind_the_claimed_option_lacks():
    first = _answers(
        "a", {"data.planning": {"rung": 8, "evidence": {"decision_power_clause": "d"}}}
    )
    second = _answers("b", {"data.planning": {"rung": 6, "evidence": {"meeting_record": "m"}}})
    result = assess([first, second])
    missing = result.dimension("data")["missing_evidence"]
    assert missing == [
        {"item": "data.planning", "assessor": "a", "claimed": 8, "credited": None,
         "missing": ["decision_log", "resource_agreement"]},
        {"item": "data.planning", "assessor": "b", "claimed": 6, "credited": None,
         "missing": ["decision_power_clause", "membership_record"]},
    ]  # fmt: skip
    card = participation_card(result)
    data = next(d for d in card["profile"] if d["dimension"] == "data")
    assert data["missing_evidence"] == missing
    text = markdown_report(result)
    assert "decision_log, resource_agreement" in text
    assert "decision_power_clause, membership_record" in text


def test_file_evidence_naming_a_folder_says_it_is_a_folder(tmp_path):
    # 'file:minutes' beside the answers file, a folder: the message said "got no such file".
    (tmp_path / "minutes").mkdir()
    answers = _answers("a", {"data.planning": {"rung": 3, "evidence": {"public_document": "x"}}})
    answers["answers"]["data.planning"]["evidence"]["public_document"] = "file:minutes"
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    with pytest.raises(InputError, match=r"expected the file 'minutes' to exist, got a folder\)"):
        load_answers(path)
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    answers["answers"]["data.planning"]["evidence"]["public_document"] = "file:notes.txt"
    path.write_text(json.dumps(answers), encoding="utf-8")
    assert load_answers(path).answers["data.planning"]["rung"] == 3

"""The shipped files against their JSON Schemas, the questionnaire lint, and bad answer files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from trustlab.errors import InputError
from trustlab.governance import (
    EXAMPLE_ANSWERS,
    RUNGS,
    assess,
    blank_answers,
    data_path,
    load_answers,
    load_questionnaire,
    load_tiers,
    participation_card,
    validate_card,
    validate_file,
)
from trustlab.governance.questionnaire import schema

QUESTIONNAIRE = yaml.safe_load(data_path("questionnaire.yaml").read_text())
VALID = {
    "kind": "participation-answers",
    "questionnaire_version": "1.0.0",
    "system": "s",
    "assessor": {"name": "a", "perspective": "self"},
    "answers": {"data.planning": {"rung": 3, "evidence": {"public_document": "https://x"}}},
}


def _validate(document, name):
    jsonschema.Draft202012Validator.check_schema(schema(name))
    jsonschema.validate(document, schema(name), cls=jsonschema.Draft202012Validator)


def test_shipped_files_validate_against_their_schemas():
    _validate(QUESTIONNAIRE, "questionnaire.schema.json")
    _validate(yaml.safe_load(data_path("tiers.yaml").read_text()), "tiers.schema.json")
    for name in EXAMPLE_ANSWERS:
        document = yaml.safe_load(data_path(name).read_text())
        _validate(document, "answers.schema.json")
        assert document["fictitious"] is True  # the worked example says what it is
    for files in ([data_path(EXAMPLE_ANSWERS[0])], [data_path(n) for n in EXAMPLE_ANSWERS]):
        card = participation_card(assess(files))
        _validate(json.loads(json.dumps(card, allow_nan=False)), "card.schema.json")
        validate_card(card)
    assert card["assessment"]["kind"] == "mixed" and card["agreement"] is not None


def test_schemas_reject_what_they_must():
    with pytest.raises(jsonschema.ValidationError):
        _validate({**QUESTIONNAIRE, "items": [{**QUESTIONNAIRE["items"][0], "citations": []}]},
                  "questionnaire.schema.json")  # fmt: skip
    bad_option = {**QUESTIONNAIRE["items"][0]["options"][0], "rung": 9}
    with pytest.raises(jsonschema.ValidationError):
        _validate({**QUESTIONNAIRE, "items": [{**QUESTIONNAIRE["items"][0],
                   "options": [bad_option]}]}, "questionnaire.schema.json")  # fmt: skip
    card = participation_card(assess(data_path(EXAMPLE_ANSWERS[0])))
    with pytest.raises(InputError, match="^card:"):
        validate_card({**card, "profile": []})


def test_lint_every_item_is_cited_and_every_option_is_a_rung_with_evidence():
    sources = QUESTIONNAIRE["sources"]
    kinds = {e["id"] for e in QUESTIONNAIRE["evidence_kinds"]}
    dims = {d["id"] for d in QUESTIONNAIRE["dimensions"]}
    stages = {s["id"] for s in QUESTIONNAIRE["stages"]}
    cells = set()
    for item in QUESTIONNAIRE["items"]:
        assert item["citations"], f"{item['id']} has no citation"
        for cite in item["citations"]:
            assert cite["source"] in sources and cite["where"].strip(), item["id"]
        assert any(c["source"] in ("mushkani2025", "arnstein1969") for c in item["citations"])
        assert sorted(o["rung"] for o in item["options"]) == list(RUNGS), item["id"]
        for option in item["options"]:
            assert option["rung"] in RUNGS and option["evidence"], (item["id"], option)
            assert set(option["evidence"]) <= kinds
        cells.add((item["dimension"], item["stage"]))
    assert cells == {(d, s) for d in dims for s in stages}  # dimensions x stages, all covered
    assert {d["id"] for d in QUESTIONNAIRE["dimensions"]} == {
        "data", "objectives", "design", "evaluation", "deployment", "redress"
    }  # fmt: skip
    for dim in QUESTIONNAIRE["dimensions"]:
        assert dim["recommendation"]["citation"]["source"] in sources
    assert [r["name"] for r in QUESTIONNAIRE["rungs"]] == [
        "manipulation", "therapy", "informing", "consultation", "placation", "partnership",
        "delegated power", "citizen control",
    ]  # fmt: skip
    assert [r["group"] for r in QUESTIONNAIRE["rungs"]] == (
        ["nonparticipation"] * 2 + ["tokenism"] * 3 + ["citizen power"] * 3
    )


def test_lint_an_uncited_item_fails_the_loader(tmp_path):
    broken = json.loads(json.dumps(QUESTIONNAIRE))
    broken["items"][4]["citations"] = []
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(InputError, match=r"^questionnaire \(q.yaml\):.*items\.4\.citations"):
        load_questionnaire(path)
    broken["items"][4]["citations"] = [{"source": "nobody", "where": "x", "verified": False}]
    path.write_text(yaml.safe_dump(broken))
    with pytest.raises(InputError, match="item 'objectives.building'"):
        load_questionnaire(path)


def _write(tmp_path: Path, document: dict | str, name: str = "answers.yaml") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path


def _with(answer: dict, item: str = "data.planning") -> dict:
    return {**VALID, "answers": {item: answer}}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (_with({"rung": 3}, item="data.nowhere"), "item 'data.nowhere'.*unknown item"),
        (_with({"rung": 9, "evidence": {}}), "item 'data.planning'.*1..8.*9 \\(out of range\\)"),
        (_with({"rung": 0}), "item 'data.planning'.*1..8.*out of range"),
        (_with({"rung": 3, "evidence": {"public_document": ""}}),
         "item 'data.planning': evidence 'public_document' is claimed but missing"),
        (_with({"rung": 3, "evidence": {"public_document": None}}),
         "item 'data.planning': evidence 'public_document' is claimed but missing"),
        (_with({"rung": 3, "evidence": {"public_document": "file:minutes.pdf"}}),
         "item 'data.planning': evidence 'public_document' is claimed but missing.*minutes.pdf"),
        (_with({"rung": 3, "evidence": {"gossip": "x"}}), "item 'data.planning'.*'gossip'"),
        (_with({"evidence": {"public_document": "x"}}), "item 'data.planning'.*expected a rung"),
        ({**VALID, "questionnaire_version": "0.9.0"}, "questionnaire_version"),
        ({**VALID, "kind": "something"}, "at kind"),
    ],
)  # fmt: skip
def test_bad_answers_name_the_item(tmp_path, document, message):
    path = _write(tmp_path, document)
    with pytest.raises(InputError, match=r"^answers \(answers.yaml\): .*" + message):
        load_answers(path)


def test_file_evidence_that_exists_is_accepted(tmp_path):
    (tmp_path / "minutes.pdf").write_text("minutes")
    path = _write(tmp_path, _with({"rung": 3, "evidence": {"public_document": "file:minutes.pdf"}}))
    assert load_answers(path).answers["data.planning"]["rung"] == 3


def test_yaml_syntax_error_gives_the_line_number(tmp_path):
    text = yaml.safe_dump(VALID, sort_keys=False).splitlines()
    text.insert(4, "  broken: [unclosed")  # becomes line 5
    path = _write(tmp_path, "\n".join(text) + "\n")
    with pytest.raises(InputError, match=r"^answers \(answers.yaml\): .*syntax error at line 6"):
        load_answers(path)
    path = _write(tmp_path, "kind: participation-answers\nsystem: [a\n", "two.yaml")
    with pytest.raises(InputError, match=r"syntax error at line \d+") as err:
        validate_file(path)
    assert "two.yaml" in str(err.value)


def test_tiers_must_partition_the_rungs(tmp_path):
    table = yaml.safe_load(data_path("tiers.yaml").read_text())
    table["tiers"][1]["rungs"] = [4, 3]
    path = _write(tmp_path, table, "tiers.yaml")
    with pytest.raises(InputError, match=r"^tiers \(tiers.yaml\) rungs: expected the rungs 1..8"):
        load_tiers(path)


def test_blank_answers_list_every_item_and_validate_once_filled(tmp_path):
    blank = yaml.safe_load(blank_answers())
    q = load_questionnaire()
    assert list(blank["answers"]) == [i["id"] for i in q.items]
    assert all(a["rung"] is None for a in blank["answers"].values())
    blank.update(system="mine", assessor={"name": "me", "role": None, "perspective": "self"})
    path = _write(tmp_path, blank)
    assert validate_file(path) == "participation-answers"
    assert load_answers(path).answers == {}  # nothing answered yet
    for name in ("questionnaire.yaml", "tiers.yaml", *EXAMPLE_ANSWERS):
        assert validate_file(data_path(name)).startswith("participation-")

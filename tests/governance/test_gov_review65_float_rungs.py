"""Review 65: JSON Schema's "integer" takes 3.0, so a questionnaire or tiers file of one's own
whose rungs are written 3.0 passed and its floats leaked into the results: the summary read
'rung 3.0 informing', the report's profile '3.000' and 'Moving up a tier' '5.0 placation'. An
answer's rung 3.0 was already read as 3. Now those rungs are read as ints too."""

from __future__ import annotations

import yaml

from trustlab.governance import assess, data_path, load_questionnaire, load_tiers

_ANSWERS = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\nanswers:\n"
    "  data.planning: {rung: 3.0, evidence: {public_document: x}}\n"
)


def _floated(tmp_path, name):
    doc = yaml.safe_load(data_path(name).read_text(encoding="utf-8"))
    for r in doc.get("rungs", []):
        r["rung"] = float(r["rung"])
    for item in doc.get("items", []):
        for option in item["options"]:
            option["rung"] = float(option["rung"])
    for tier in doc.get("tiers", []):
        tier["rungs"] = [float(r) for r in tier["rungs"]]
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_rungs_written_as_floats_are_ints(tmp_path):
    q = _floated(tmp_path, "questionnaire.yaml")
    t = _floated(tmp_path, "tiers.yaml")
    assert type(load_questionnaire(q).item("data.planning")["options"][2]["rung"]) is int
    assert all(type(r) is int for tier in load_tiers(t).tiers for r in tier["rungs"])
    answers = tmp_path / "a.yaml"
    answers.write_text(_ANSWERS, encoding="utf-8")
    result = assess(answers, questionnaire=q, tiers=t)
    dim = result.dimension("data")
    assert (type(dim["rung"]), type(dim["next_step"]["rung"])) == (int, int)
    assert "rung 3 informing (tokenism) -> Tier 2" in result.summary()

"""Review 54 of the participation assessment: answers files as a committee writes them.

A JSON file written by Python's ``json.dump`` (ASCII escapes, the default) writes a character
outside the Basic Multilingual Plane (an emoji, some CJK) as a surrogate pair, which YAML's reader
refuses: such a valid JSON file was refused as a YAML syntax error. Files about different systems
were refused with the systems cut short and no file named.
"""

from __future__ import annotations

import json

import pytest

from cli_helpers import one_line, run_main

SYSTEM = "Städtischer Chatbot 🤖"
NAME = "Comité 😀"


def _doc(system=SYSTEM, name=NAME):
    return {
        "kind": "participation-answers",
        "questionnaire_version": "1.0.0",
        "system": system,
        "assessor": {"name": name, "perspective": "external"},
        "note": "two sessions 😀",
        "answers": {
            "data.planning": {
                "rung": 4,
                "evidence": {"public_document": "https://x.example/😀", "consultation_record": "m"},
                "note": "ok ✓ 😀",
            },
            "data.building": None,
        },
    }


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # the chart's font: no emoji
def test_a_json_file_with_escaped_emoji_is_read_as_json(tmp_path, capsys):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(_doc(), indent="\t"), encoding="utf-8")  # ASCII escapes
    assert "\\ud83e\\udd16" in path.read_text(encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_main(["governance", "assess", path, "--out", out], capsys)
    assert code == 0, err
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert result["system"] == SYSTEM
    assert result["assessors"][0]["name"] == NAME
    assert result["assessors"][0]["note"] == "two sessions 😀"
    assert result["profile"]["data"] == "T2"
    item = result["dimensions"][0]["items"][0]
    assert item["evidence"][NAME]["public_document"] == "https://x.example/😀"
    assert item["notes"][NAME] == "ok ✓ 😀"
    assert f"# Participation assessment: {SYSTEM}" in (out / "participation.md").read_text(
        encoding="utf-8"
    )


def test_a_lone_surrogate_escape_in_json_is_one_line(tmp_path, capsys):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(_doc(system="Bot \ud83e")), encoding="utf-8")
    code, out, err = run_main(["governance", "assess", path, "--out", tmp_path / "o"], capsys)
    assert code == 2
    line = one_line(err)
    assert "ANSWERS (a.json)" in line and "lone surrogate" in line
    assert not (tmp_path / "o").exists()


def test_a_key_twice_in_json_is_still_refused(tmp_path, capsys):
    for ascii_only in (True, False):  # YAML cannot read the escapes, and then names no line
        text = json.dumps(_doc(), indent=1, ensure_ascii=ascii_only).replace(
            '"data.building": null', '"data.building": null,\n "data.planning": {"rung": 1}'
        )
        path = tmp_path / "a.json"
        path.write_text(text, encoding="utf-8")
        code, _, err = run_main(["governance", "validate", path], capsys)
        assert code == 2
        line = one_line(err)
        assert "expected each key once in a mapping, got 'data.planning' twice" in line
        assert ("(line " in line) != ascii_only, line


def test_files_about_two_systems_name_the_file_and_both_systems(tmp_path, capsys):
    first, second = tmp_path / "council.json", tmp_path / "auditor.json"
    first.write_text(json.dumps(_doc()), encoding="utf-8")
    other = "A much longer system name that the old message cut short: 311 chatbot (v2)"
    second.write_text(json.dumps(_doc(system=other, name="Auditor")), encoding="utf-8")
    code, _, err = run_main(["governance", "assess", first, second], capsys)
    assert code == 2
    line = one_line(err)
    assert f"got {other!r} in {second}" in line
    assert f"{SYSTEM!r} in {first}" in line


# ---- the alpha rule: a dimension whose assessors share a tier is flagged when alpha < 0.667


def _answers_file(tmp_path, name, rungs):
    """An answers file crediting ``rungs`` to data.planning/building/operating (full evidence)."""
    from trustlab.governance import load_questionnaire

    q = load_questionnaire()
    answers = {}
    for stage, rung in zip(("planning", "building", "operating"), rungs, strict=True):
        item = q.item(f"data.{stage}")
        kinds = next(o["evidence"] for o in item["options"] if o["rung"] == rung)
        answers[item["id"]] = {"rung": rung, "evidence": {k: f"{k} ref" for k in kinds}}
    doc = {**_doc(system="s", name=name), "answers": answers}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_alpha_below_the_threshold_flags_a_dimension_whose_tiers_agree(tmp_path):
    import krippendorff
    import numpy as np

    from trustlab.governance import ALPHA_THRESHOLD, assess

    assert ALPHA_THRESHOLD == 0.667
    cases = (  # credited rungs per assessor; every assessor's dimension rung is in one tier
        ([[1, 2, 5], [3, 4, 5]], True),  # alpha 0.608: below 0.667, flagged
        ([[1, 1, 3], [1, 1, 3], [2, 2, 3]], False),  # alpha 0.695: at or above, not flagged
    )
    for k, (matrix, flagged) in enumerate(cases):
        files = [_answers_file(tmp_path, f"a{k}{i}", row) for i, row in enumerate(matrix)]
        result = assess(files)
        dim = result.dimension("data")
        assert len({(r - 1) // 2 for r in dim["assessor_rungs"].values()}) == 1
        alpha = result.agreement["per_dimension"]["data"]["alpha"]
        expected = krippendorff.alpha(
            reliability_data=np.array(matrix, float), level_of_measurement="ordinal",
            value_domain=list(range(1, 9)),
        )  # fmt: skip
        assert abs(alpha - expected) < 1e-12
        assert 0.6 < alpha < 0.7
        assert dim["disagreement"] is flagged
        assert ("data" in result.agreement["flagged_dimensions"]) is flagged
        assert ("[assessors disagree]" in result.summary().splitlines()[2]) is flagged


# ---- a questionnaire or tiers file's cross-checks name the CLI option, as its schema errors do


def test_cross_check_errors_name_the_option(tmp_path, capsys):
    import yaml

    from trustlab.governance import data_path

    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    doc["items"][1]["id"] = doc["items"][0]["id"]
    questionnaire = tmp_path / "q.yaml"
    questionnaire.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    code, _, err = run_main(
        ["governance", "questionnaire", "--questionnaire", questionnaire], capsys
    )
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --questionnaire (q.yaml) item 'data.planning': ")
    assert "expected a unique item id" in line

    tiers = yaml.safe_load(data_path("tiers.yaml").read_text(encoding="utf-8"))
    tiers["tiers"][0]["rungs"], tiers["tiers"][1]["rungs"] = [3, 4], [1, 2]
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(tiers, sort_keys=False), encoding="utf-8")
    answers = data_path("example_answers_developer.yaml")
    code, _, err = run_main(["governance", "assess", answers, "--tiers", path], capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("trustlab: error: --tiers (t.yaml) rungs: expected the rungs 1..8 ")


# ---- the audit section's summary says what the standalone report flags


def test_the_audit_summary_names_disagreement_and_fictitious_answers(tmp_path):
    from types import SimpleNamespace

    from trustlab.audit.sections import participation as section
    from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path

    example = assess([data_path(name) for name in EXAMPLE_ANSWERS])
    flagged = example.agreement["flagged_dimensions"]
    assert flagged
    summary = section.build(SimpleNamespace(participation=example)).summary
    assert summary.startswith("Tier per dimension (3 assessors, fictitious): ")
    assert (
        f" Assessors disagree on {len(flagged)} of 6 dimensions: {', '.join(flagged)}." in summary
    )

    agree = [_answers_file(tmp_path, name, [3, 3, 3]) for name in ("x", "y")]
    summary = section.build(SimpleNamespace(participation=assess(agree))).summary
    assert summary.startswith("Tier per dimension (2 assessors): data: T2, objectives: none")
    assert "No dimension is flagged for disagreement between assessors." in summary


# ---- the flagged items are those whose credited tiers differ, not their rungs


def test_items_are_flagged_by_tier_not_by_rung(tmp_path):
    from trustlab.governance import assess, markdown_report

    x = _answers_file(tmp_path, "x", [3, 2, 5])
    y = _answers_file(tmp_path, "y", [4, 3, 6])  # T2/T2 same tier; T1/T2 and T3/T3
    result = assess([x, y])
    flagged = {f["item"]: f["credited"] for f in result.agreement["flagged_items"]}
    assert flagged == {"data.building": {"x": 2, "y": 3}}
    text = markdown_report(result)
    assert "| data.building | 2 | 3 |" in text
    assert "| data.planning | 3 | 4 |" not in text and "| data.operating | 5 | 6 |" not in text


# ---- the next step lists only the options (and their evidence) in the tier it names


def test_the_next_step_leaves_out_options_of_a_higher_tier(tmp_path):
    import yaml

    from trustlab.governance import assess, data_path

    keep = {"data.planning": {1, 2, 3, 4, 5}, "data.building": {1, 2, 3, 4, 7}}
    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    for item in doc["items"]:
        if item["dimension"] == "data":
            wanted = keep.get(item["id"], {1, 2, 3, 4})
            item["options"] = [o for o in item["options"] if o["rung"] in wanted]
    questionnaire = tmp_path / "q.yaml"
    questionnaire.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    answers = tmp_path / "a.yaml"
    answers.write_text(
        "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
        "assessor: {name: a, perspective: self}\nanswers:\n"
        "  data.planning: {rung: 3, evidence: {public_document: x}}\n",
        encoding="utf-8",
    )
    step = assess(answers, questionnaire=questionnaire).dimension("data")["next_step"]
    assert (step["tier"], step["rung"]) == ("T3", 5)  # credited 3 (Tier 2): next Tier 3, rung 5
    assert [(o["item"], o["rung"]) for o in step["options"]] == [("data.planning", 5)]
    # rung 5's evidence only: data.building's rung 7 lands in Tier 4, not the tier named
    assert step["evidence"] == ["consultation_record", "meeting_record", "membership_record"]


# ---- a claimed rung that the item does not offer is refused (with a questionnaire of one's own)


def test_a_rung_the_item_does_not_offer_is_refused(tmp_path, capsys):
    import yaml

    from trustlab.governance import data_path

    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    for item in doc["items"]:
        item["options"] = [o for o in item["options"] if o["rung"] <= 4]
    questionnaire = tmp_path / "q.yaml"
    questionnaire.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    answers = tmp_path / "a.yaml"
    answers.write_text(
        "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
        "assessor: {name: a, perspective: self}\nanswers:\n  data.planning:\n    rung: 5\n"
        "    evidence: {public_document: x, consultation_record: y, membership_record: z,\n"
        "               meeting_record: w}\n",
        encoding="utf-8",
    )
    args = ["governance", "assess", answers, "--questionnaire", questionnaire]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: ANSWERS (a.yaml): item 'data.planning': expected a rung among this "
        "item's options [1, 2, 3, 4], got 5"
    )

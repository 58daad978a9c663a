"""Review 53 of the participation assessment: with a questionnaire of one's own whose items skip
a tier, 'Moving up a tier' names the tier the lowest option above lands in, not a tier that no
option reaches (it read 'Tier 3, rung 5' with the evidence of rung 7, which lands in Tier 4)."""

from __future__ import annotations

import yaml

ANSWERS = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\nanswers:\n"
)


def _questionnaire(tmp_path, keep):
    from trustlab.governance import data_path

    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    for item in doc["items"]:
        if item["dimension"] == "data":
            item["options"] = [o for o in item["options"] if o["rung"] in keep]
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _assess(tmp_path, keep, answers):
    from trustlab.governance import assess

    path = tmp_path / "a.yaml"
    path.write_text(ANSWERS + answers, encoding="utf-8")
    return assess(path, questionnaire=_questionnaire(tmp_path, keep))


def _data_row(result):
    from trustlab.governance import markdown_report

    rows = [line for line in markdown_report(result).splitlines() if line.startswith("| Data")]
    return rows[-1]  # the last table: 'Moving up a tier'


def test_a_skipped_tier_is_not_named_as_the_next_step(tmp_path):
    answers = (
        "  data.planning:\n    rung: 4\n"
        "    evidence: {public_document: x, consultation_record: y}\n"
    )
    result = _assess(tmp_path, (1, 2, 3, 4, 7), answers)
    dim = result.dimension("data")
    assert (dim["rung"], dim["tier"]) == (4, "T2")
    step = dim["next_step"]
    assert (step["tier"], step["rung"], step["rung_name"]) == ("T4", 7, "delegated power")
    assert {o["rung"] for o in step["options"]} == {7}
    row = _data_row(result)
    assert "Tier 4 (unverified) (Tier 3: no item of this dimension offers an option there)" in row
    assert "| 7 delegated power |" in row


def test_nothing_credited_and_the_first_tier_offered_by_no_option(tmp_path):
    result = _assess(tmp_path, (3, 6, 8), "  data.planning:\n    rung: null\n")
    step = result.dimension("data")["next_step"]
    assert (step["tier"], step["rung"]) == ("T2", 3)
    assert step["evidence"] == ["public_document"]
    row = _data_row(result)
    assert "the first tier" not in row
    assert "no rung credited yet; the lowest option offered is rung 3 informing" in row
    assert "(Tier 1: no item of this dimension offers an option there)" in row


def test_the_shipped_questionnaire_points_to_the_next_tier_and_its_lowest_rung(tmp_path):
    from trustlab.governance import assess, data_path

    path = tmp_path / "a.yaml"
    path.write_text(
        ANSWERS + "  data.planning:\n    rung: 4\n"
        "    evidence: {public_document: x, consultation_record: y}\n",
        encoding="utf-8",
    )
    q = data_path("questionnaire.yaml")
    step = assess(path, questionnaire=q).dimension("data")["next_step"]
    assert (step["tier"], step["rung"]) == ("T3", 5)
    assert {o["rung"] for o in step["options"]} == {5} and len(step["options"]) == 3

"""An ``Answers`` loaded already was checked against assess()'s questionnaire by version and item
ids only: scored against a questionnaire of one's own that keeps the version but no longer offers
the answer's rung (or its evidence kind), the answer was credited nothing, unseen, where the same
file given as a path is refused."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from trustlab.errors import InputError
from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path, load_answers, load_questionnaire


@pytest.fixture(scope="module")
def answers():
    return load_answers(data_path(EXAMPLE_ANSWERS[0]))  # data.planning: rung 3


def test_a_rung_the_questionnaire_does_not_offer_is_refused(answers, tmp_path):
    doc = yaml.safe_load(data_path("questionnaire.yaml").read_text(encoding="utf-8"))
    item = next(i for i in doc["items"] if i["id"] == "data.planning")
    item["options"] = [o for o in item["options"] if o["rung"] != 3]
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    own = load_questionnaire(tmp_path / "q.yaml")
    assert own.version == answers.questionnaire_version  # same version, other options
    expected = r"item 'data\.planning': expected a rung among this item's options \[1, 2, 4"
    with pytest.raises(InputError, match=r"^answers \(.*\): " + expected):
        load_answers(answers.source, own)  # the file, as a path
    with pytest.raises(InputError, match=r"^answers\[0\] \(.*\): " + expected):
        assess(answers, questionnaire=own)  # the same answers, loaded already


def test_an_unknown_evidence_kind_is_refused(answers):
    planning = {**answers.answers["data.planning"], "evidence": {"hearsay": "x"}}
    other = dataclasses.replace(answers, answers={**answers.answers, "data.planning": planning})
    with pytest.raises(InputError, match=r"item 'data\.planning': expected evidence kinds among "):
        assess(other)
    assert assess(answers).profile == assess(data_path(EXAMPLE_ANSWERS[0])).profile

"""Answers already loaded (an ``Answers`` from load_answers against another questionnaire) were
scored by assess() without a check: those of a questionnaire 2.0.0 were scored against the
shipped 1.0.0, an item 1.0.0 lacks dropped unseen, and the result said questionnaire 1.0.0."""

from __future__ import annotations

import dataclasses

import pytest

from trustlab.errors import InputError
from trustlab.governance import EXAMPLE_ANSWERS, assess, data_path, load_answers


@pytest.fixture(scope="module")
def answers():
    return load_answers(data_path(EXAMPLE_ANSWERS[0]))


def test_answers_of_another_questionnaire_version_are_refused(answers):
    other = dataclasses.replace(answers, questionnaire_version="2.0.0")
    with pytest.raises(InputError, match=r"^answers\[0\] \(example_answers_developer\.yaml\): "
                       r"questionnaire_version: expected '1\.0\.0'.*got '2\.0\.0'"):  # fmt: skip
        assess(other)


def test_answers_to_an_unknown_item_are_refused(answers):
    extra = {**answers.answers, "data.plan2": answers.answers["data.planning"]}
    other = dataclasses.replace(answers, answers=extra, source="")
    with pytest.raises(InputError, match=r"^answers\[1\]: item 'data\.plan2': expected an item"):
        assess([answers, dataclasses.replace(other, assessor={**answers.assessor, "name": "b"})])
    assert assess(answers).profile == assess(data_path(EXAMPLE_ANSWERS[0])).profile

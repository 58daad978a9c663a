"""validate_file(path, questionnaire) named a bad file by its kind: a bad questionnaire file at
``path`` was an InputError about the argument ``questionnaire`` (validate_file's own second
argument, perhaps not even given), a bad tiers or answers file one about ``tiers`` / ``answers``.
The file is ``path`` (the CLI's PATH since d28b940d); a bad card or kind was already."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.governance import load_questionnaire, validate_file


@pytest.mark.parametrize("kind", ["questionnaire", "tiers", "answers", "card"])
def test_a_bad_file_is_named_path(tmp_path, kind):
    path = tmp_path / f"{kind}.yaml"
    path.write_text(f"kind: participation-{kind}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^path \({kind}\.yaml\): expected a file valid") as err:
        validate_file(path, load_questionnaire())
    assert err.value.argument == "path"


def test_an_unhashable_kind_is_refused_naming_path(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("kind: [a]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^path \(list\.yaml\): expected a .* got kind \['a'\]"):
        validate_file(path)

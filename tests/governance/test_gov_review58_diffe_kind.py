"""Review 58 (diffE): 'trustlab governance validate participation/result.json' (a file of no
governance kind) said 'path kind: expected one of participation-questionnaire, ..., got None', and
a file holding a list said 'path (l.yaml): ...' / 'answers[0] (l.yaml): ...' on the command line
(its error's argument carried the file name, so the CLI could not name PATH / ANSWERS)."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main
from trustlab.errors import InputError
from trustlab.governance import validate_file


def test_a_file_of_no_governance_kind_is_named_with_the_kinds_taken(tmp_path, capsys):
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"tier": "consultation"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"^path \(result\.json\): expected a questionnaire, "
                       r"answers, tiers or card file \(kind: participation-questionnaire, .*"
                       r"participation-card\), got no 'kind' key$") as info:  # fmt: skip
        validate_file(result)
    assert info.value.argument == "path"
    code, out, err = run_main(["governance", "validate", result], capsys)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith("trustlab: error: PATH (result.json): expected a questionnaire, answers")
    other = tmp_path / "other.yaml"
    other.write_text("kind: 5\n", encoding="utf-8")
    code, _, err = run_main(["governance", "validate", other], capsys)
    assert code == 2 and err.rstrip().endswith("got kind 5")


def test_a_list_file_names_the_command_line_argument(tmp_path, capsys):
    listed = tmp_path / "l.yaml"
    listed.write_text("- 1\n", encoding="utf-8")
    for command, name in (("validate", "PATH"), ("assess", "ANSWERS")):
        code, out, err = run_main(["governance", command, listed], capsys)
        assert (code, out) == (2, "")
        assert err == f"trustlab: error: {name} (l.yaml): expected a YAML mapping (key: value " \
            "lines), got list [1]\n"  # fmt: skip

"""``trustlab safety context score OUTPUTS`` / ``stats DATA``: a bad file is named as the usage
line names the argument (review 63). Before, the errors said ``path:`` (score and stats) or
``dataset:`` (stats), names of library arguments the command line does not have.
"""

from __future__ import annotations

import json

import pytest

from casebench_records import MINIMAL_CONTEXT
from cli_helpers import one_line, run_main


@pytest.fixture
def run(capsys):
    return lambda *args: run_main(args, capsys)


@pytest.mark.parametrize(
    ("command", "name"), [(("score", "--mode", "binary"), "OUTPUTS"), (("stats",), "DATA")]
)
def test_a_bad_file_is_named_as_the_argument(run, tmp_path, command, name):
    path = tmp_path / "records.json"
    path.write_text(json.dumps([1, 2]))
    verb, *options = command
    code, _, err = run("safety", "context", verb, path, *options)
    assert code == 2
    assert one_line(err) == f"trustlab: error: {name}: record 0: expected a JSON object, got int"
    code, _, err = run("safety", "context", verb, tmp_path / "missing.json", *options)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {name}: expected an existing file")


def test_stats_of_one_context_kind_names_data(run, tmp_path):
    context = MINIMAL_CONTEXT
    record = {"query": "q", "category": "x", "context": context, "safe_rate": 1 / 21}
    path = tmp_path / "data.json"
    path.write_text(json.dumps([record | {"context_intended_to_be_safe": True}]))
    code, _, err = run("safety", "context", "stats", path)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: DATA: expected records of both safe-")

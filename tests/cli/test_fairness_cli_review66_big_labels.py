"""``trustlab fairness dcp --labels`` names integer classes beyond 2**53 exactly (review 66).

_parse_labels read every --labels name of an integer label column through float(), which rounds
an id beyond 2**53 to another one (measured): a label column holding 1 and 9007199254740993 with
``--labels 1,9007199254740993`` stopped on "--label: expected values among labels=[1,
9007199254740992], got unknown value(s) 9007199254740993", exit 2, naming a class the user never
wrote. Now the names of an integer column are read as integers first: the labels are
[1, 9007199254740993] in result.json, as in the file; names such as 1e0 still read as floats
and become integers when whole, as before.
"""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_main as run

BIG = 2**53 + 1


@pytest.mark.parametrize(("given", "labels"), [(f"1,{BIG}", [1, BIG]), ("1e0,2", [1, 2])])
def test_labels_of_an_integer_column_are_read_exactly(tmp_path, capsys, given, labels):
    second = labels[1]
    path = tmp_path / "d.csv"
    path.write_text(f"y,p,g\n1,1,a\n{second},{second},a\n{second},1,b\n1,1,b\n")
    args = ["fairness", "dcp", "--data", path, "--label", "y", "--pred", "p", "--group", "g"]
    code, out, _ = run([*args, "--no-aggregate", "--json", "--labels", given], capsys)
    assert code == 0
    assert json.loads(out)["inputs"]["labels"] == labels

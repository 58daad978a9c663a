"""``trustlab fairness dcp --labels`` names the classes of a uint64 label column exactly (diff
review 66 K of 22064fde).

22064fde reads the --labels names of an integer column with int(), but dcp_inputs made an array
of those Python ints with np.asarray, which is float64 once one is beyond int64 (measured on
7de283f0): a label column of 5 and 18446744073709551615 (pandas reads it as uint64) with
``--labels 5,18446744073709551615`` ran, exit 0, with the classes 5.0 and 1.8446744073709552e+19
in the output (a name the file never had; before 22064fde, exit 2). Now such labels are a uint64
array: the classes read 5 and 18446744073709551615, as in the file.
"""

from __future__ import annotations

import json

from cli_helpers import run_main as run
from trustlab.fairness import dcp_inputs

TOP = 2**64 - 1


def test_labels_of_a_uint64_column_are_named_exactly(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text(f"y,p,g\n5,5,a\n{TOP},{TOP},a\n{TOP},5,b\n5,5,b\n")
    args = ["fairness", "dcp", "--data", path, "--label", "y", "--pred", "p", "--group", "g"]
    code, out, _ = run([*args, "--no-aggregate", "--json", "--labels", f"5,{TOP}"], capsys)
    assert code == 0
    assert json.loads(out)["inputs"]["labels"] == [5, TOP]


def test_python_ints_beyond_int64_are_labels_of_their_own():
    y, p = [5, TOP, TOP - 1, 5], [5, TOP, TOP, 5]
    inputs = dcp_inputs(y, p, ["a", "a", "b", "b"], labels=[5, TOP - 1, TOP])
    assert inputs.labels == (5, TOP - 1, TOP)
    assert all(type(v) is int for v in inputs.labels)

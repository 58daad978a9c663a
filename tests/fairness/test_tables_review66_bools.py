"""An aggregate table's share or weight of True/False is refused, and a bad number is shown as
written (review 66).

aggregates_from_table read every share through pd.to_numeric, which turns True/False into 1/0
(measured): a weight column True, False (pandas reads it as bool from a CSV) gave group weights
[1, 0] and ``trustlab fairness dcp-aggregate`` printed a DCP of 0.0000, exit 0; a pandas
"boolean" column and True in an object column beside 0.4 were taken the same way. A negative
share was shown with numpy 2's repr: "got np.float64(-0.4) in the row of group 'n'".

Now "data: expected non-negative numbers in column 'weight', got True in the row of group 'n'"
(the CLI: one line naming --data, exit 2) and "got -0.4"; numbers, numeric text and empty cells
are read or named as before.
"""

from __future__ import annotations

import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run
from trustlab.errors import InputError
from trustlab.fairness import aggregates_from_table


def _table(weight):
    return pd.DataFrame(
        {
            "group": ["n", "s"],
            "weight": weight,
            "label:y": [0.3, 0.5],
            "label:n": [0.7, 0.5],
            "pred:y": [0.25, 0.55],
            "pred:n": [0.75, 0.45],
        }
    )


@pytest.mark.parametrize(
    ("weight", "got"),
    [
        ([True, False], "True in the row of group 'n'"),
        (pd.array([True, False], dtype="boolean"), "True in the row of group 'n'"),
        ([0.4, True], "True in the row of group 's'"),
        ([-0.4, 1.4], "-0.4 in the row of group 'n'"),
    ],
)
def test_true_false_and_negative_shares_are_refused_as_written(weight, got):
    with pytest.raises(InputError) as info:
        aggregates_from_table(_table(weight))
    assert str(info.value) == f"data: expected non-negative numbers in column 'weight', got {got}"
    assert info.value.argument == "data"


def test_numbers_and_numeric_text_are_read_as_before():
    assert aggregates_from_table(_table([1, 0])).group_weights.tolist() == [1.0, 0.0]
    assert aggregates_from_table(_table(["0.4", "0.6"])).group_weights.tolist() == [0.4, 0.6]


def test_cli_weight_column_of_true_false_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "agg.csv"
    path.write_text(
        "group,weight,label:yes,label:no,pred:yes,pred:no\n"
        "north,True,0.30,0.70,0.25,0.75\nsouth,False,0.50,0.50,0.55,0.45\n"
    )
    code, _, err = run(["fairness", "dcp-aggregate", "--data", path, "--n-restarts", "1"], capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --data: expected non-negative numbers in column 'weight', "
        "got True in the row of group 'north'"
    )

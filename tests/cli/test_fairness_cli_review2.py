"""``trustlab fairness dcp --labels`` on a column of True/False (second review pass)."""

import json

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture(scope="module")
def booleans(tmp_path_factory):
    """Boolean labels and predictions; the second file has an empty label cell."""
    rng = np.random.default_rng(1)
    n = 120
    y = rng.random(n) < 0.4
    pred = np.where(rng.random(n) < 0.8, y, ~y)
    table = pd.DataFrame({"y": y, "yhat": pred, "g": rng.choice(["m", "f"], n)})
    folder = tmp_path_factory.mktemp("bools")
    table.to_csv(folder / "plain.csv", index=False)
    gap = table.astype(object)
    gap.loc[3, "y"] = None
    gap.to_csv(folder / "gap.csv", index=False)
    return folder


def args(path, labels):
    return ["fairness", "dcp", "--data", str(path), "--label", "y", "--pred", "yhat"] + [
        "--group", "g", "--no-aggregate", "--json", "--labels", labels,
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["plain.csv", "gap.csv"])
def test_dcp_labels_name_boolean_classes_as_written(booleans, name, capsys):
    """--labels False,True was refused as 'expected numbers' (bool column) or every value was
    'unknown' among ['True', 'False'] (the same column with an empty cell)."""
    code, out, err = run(args(booleans / name, "True,false"), capsys)
    assert code == 0, err
    assert json.loads(out)["known"]["labels"] == [True, False]
    default_code, default_out, _ = run(args(booleans / name, "True,False")[:-2], capsys)
    assert default_code == 0
    # the same classes as without --labels, in the order given
    assert sorted(json.loads(default_out)["known"]["labels"]) == [False, True]


def test_dcp_labels_other_than_true_false_are_named(booleans, capsys):
    code, _, err = run(args(booleans / "plain.csv", "yes,no"), capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --labels: expected True and False, like the label column, got 'yes,no'"
    )


@pytest.mark.parametrize("float_column", ["y", "yhat"])
def test_dcp_whole_float_predictions_beside_integer_labels_stay_integers(
    float_column, tmp_path, capsys
):
    """Predictions written 0.0, 1.0, 2.0 (a float array) beside integer labels named the classes
    0.0, 1.0, 2.0 in the summary and result.json; so did whole-float labels beside integer
    predictions."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 90)
    table = pd.DataFrame(
        {"y": y, "yhat": np.where(rng.random(90) < 0.8, y, 2), "g": rng.choice(["m", "f"], 90)}
    )
    table[float_column] = table[float_column].astype(float)
    path = tmp_path / "floats.csv"
    table.to_csv(path, index=False)
    command = ["fairness", "dcp", "--data", str(path), "--label", "y", "--pred", "yhat"]
    code, out, err = run([*command, "--group", "g", "--no-aggregate", "--json"], capsys)
    assert code == 0, err
    labels = json.loads(out)["known"]["labels"]
    assert labels == [0, 1, 2] and all(isinstance(v, int) for v in labels)
    # real fractions are not turned into integers: still refused as scores
    table["yhat"] = table["yhat"] + 0.5
    table.to_csv(path, index=False)
    code, _, err = run([*command, "--group", "g", "--no-aggregate"], capsys)
    assert code == 2 and "--pred" in one_line(err)


def test_a_table_without_rows_is_named_as_such(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("y,yhat,g\n")
    code, _, err = run(args(tmp_path / "empty.csv", "0,1"), capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --data: expected rows with a label, prediction and group, "
        "got a table without rows"
    )

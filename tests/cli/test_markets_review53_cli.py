"""``trustlab strategic price`` on a user's own table: refusals that name what is wrong and say
what is accepted (review 5)."""

import pandas as pd
import pytest

from cli_helpers import one_line, run_main, with_options

BASE = ["strategic", "price", "--budget-col", "savings", "--weights", "income=1,tenure=0.5"]


@pytest.fixture
def table(tmp_path):
    frame = pd.DataFrame(
        {
            "income": [-1.0, -2.0, -0.5, 1.0],
            "tenure": [0, 1, 0, 2],
            "savings": [2.0, 2.0, 2.0, 1.0],
            "label": ["true", "0", "-1", "1"],
        }
    )
    path = tmp_path / "users.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_negative_price_is_refused_without_offering_inf(table, capsys):
    """--price inf is refused by the CLI, so the refusal of -1 may not offer 'inf for no market'."""
    _, path = table
    code, _, err = run_main(with_options(BASE, ["--data", path, "--price", "-1"]), capsys)
    line = one_line(err)
    assert code == 2
    assert (
        "--price: expected a finite non-negative price" in line and "inf for no market" not in line
    )


def test_text_in_a_numeric_column_names_the_column_and_row(table, tmp_path, capsys):
    frame, _ = table
    frame = frame.astype({"savings": object})
    frame.loc[2, "savings"] = "1,200"
    path = tmp_path / "text.csv"
    frame.to_csv(path, index=False)
    code, _, err = run_main(with_options(BASE, ["--data", path]), capsys)
    line = one_line(err)
    assert code == 2
    assert "--budget-col: expected numbers in column 'savings', got '1,200' at row 2" in line


def test_text_labels_mixing_zero_and_minus_one_are_refused(table, capsys):
    """'0' and '-1' together are three classes with '1', as the numeric column {-1, 0, 1} is."""
    _, path = table
    code, _, err = run_main(with_options(BASE, ["--data", path, "--label", "label"]), capsys)
    line = one_line(err)
    assert code == 2
    assert "--label: expected one convention for negatives (0 or -1, not both)" in line


def test_text_labels_of_one_convention_are_read(table, tmp_path, capsys):
    frame, _ = table
    frame["label"] = ["true", "-1", "-1", "+1"]
    path = tmp_path / "pm.csv"
    frame.to_csv(path, index=False)
    args = with_options(BASE, ["--data", path, "--label", "label"]) + ["--json"]
    code, out, _ = run_main(args, capsys)
    assert code == 0
    assert '"accuracy"' in out

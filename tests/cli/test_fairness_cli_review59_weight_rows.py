"""``trustlab fairness dcp --sample-weight``: a negative or infinite weight is named by its row of
the file (review 59). The library saw the rows left after those with a missing label were dropped
and named a position among them: a -3 on data row 6, after two dropped rows, read "at index 3",
a row whose weight is 2."""

import pytest

from cli_helpers import one_line, run_main

BASE = ["fairness", "dcp", "--label", "y", "--pred", "p", "--group", "g", "--sample-weight", "w"]
ROWS = "y,p,g,w\n,0,a,1\n,1,a,1\n0,0,a,1\n1,1,a,2\n1,0,b,1\n0,0,b,{last}\n"


@pytest.mark.parametrize(
    "last, message",
    [
        ("-3", "expected non-negative weights, got -3 in data row 6 (1 such value(s) in all)"),
        ("inf", "expected finite weights, got inf in data row 6 (1 such value(s) in all)"),
    ],
)
def test_a_bad_weight_is_named_by_its_row_in_the_file(tmp_path, capsys, last, message):
    (tmp_path / "t.csv").write_text(ROWS.format(last=last))
    code, out, err = run_main([*BASE, "--data", tmp_path / "t.csv", "--no-aggregate"], capsys)
    assert (code, out) == (2, "")
    assert one_line(err).endswith(f"trustlab: error: --sample-weight: {message}")

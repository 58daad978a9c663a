"""``evaluate rank -p`` with probability CSVs written without a header row (diff review 60 A of
574532f5, which fixed the same for --labels).

``np.savetxt("a.csv", probs, delimiter=",")`` writes no header: pandas took each file's first
row of probabilities as its class names, and the command said "--predictions: expected the same
class columns in every CSV, got list [['3.954619895429784537e-01', ..." without saying why."""

from __future__ import annotations

import numpy as np

from cli_helpers import run_main


def test_headerless_probability_csvs_say_their_first_row_was_taken_as_class_names(capsys, tmp_path):
    rng = np.random.default_rng(0)
    for name in "ab":
        probs = rng.dirichlet(np.ones(3), 8)
        np.savetxt(tmp_path / f"{name}.csv", probs, delimiter=",")
    files = [tmp_path / "a.csv", tmp_path / "b.csv"]
    code, _, err = run_main(["evaluate", "rank", "-p", *files, "--n-bootstrap", "0"], capsys)
    first = (tmp_path / "a.csv").read_text().splitlines()[0].split(",")
    assert code == 2
    assert err == (
        f"trustlab: error: --predictions: expected class names in the first row of {files[0]} "
        f"(a table's first row is its header), got numbers {first}; if they are a model's "
        "outputs, add a header line of class names above them\n"
    )
    # with a header line of class names (whole numbers are class names) the same files rank
    for path in files:
        path.write_text("0,1,2\n" + path.read_text())
    code, out, err = run_main(["evaluate", "rank", "-p", *files, "--n-bootstrap", "0"], capsys)
    assert code == 0, err

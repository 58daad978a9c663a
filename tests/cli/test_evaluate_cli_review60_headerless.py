"""``evaluate rank --labels`` with a .csv written without a header row (review 60).

``np.savetxt("y.csv", y, fmt="%d")`` writes no header: pandas took the first label as the column
name, and the command said "--labels: expected 40 labels (one per item), got an array of shape
(39,) and dtype int64" without saying why one was missing."""

from __future__ import annotations

import numpy as np

from cli_helpers import run_main


def test_a_headerless_label_csv_says_its_first_row_was_taken_as_the_header(capsys, tmp_path):
    rng = np.random.default_rng(0)
    for name in "ab":
        np.save(tmp_path / f"{name}.npy", rng.dirichlet(np.ones(3), 12))
    y = np.array([2, 0, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2])
    np.savetxt(tmp_path / "y.csv", y, fmt="%d")
    files = [tmp_path / "a.npy", tmp_path / "b.npy"]
    args = ["evaluate", "rank", "-p", *files, "--n-bootstrap", "0", "--labels"]
    code, _, err = run_main([*args, tmp_path / "y.csv"], capsys)
    assert code == 2
    assert err == (
        "trustlab: error: --labels: expected 12 labels (one per item), got 11 below the header "
        f"row '2' of {tmp_path / 'y.csv'}; a .csv's first row is its header: if '2' is a label, "
        "add a header line such as 'label' above it\n"
    )
    # with a header line the same labels rank
    (tmp_path / "y.csv").write_text("label\n" + "\n".join(map(str, y)) + "\n")
    code, out, err = run_main([*args, tmp_path / "y.csv"], capsys)
    assert code == 0, err
    assert "Spearman rho" in out

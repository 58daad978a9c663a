"""Review 64 (CLI): an --out under a file is refused before any work (explain fit/fastpd/plot)."""

from __future__ import annotations

import pytest

from cli_helpers import one_line


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_anova_fit_out_under_a_file_is_refused_before_work(run, tmp_path, overwrite):
    # was: a hint to delete DIR/_state (no such thing), and with --overwrite, after
    # "discarding the interrupted run", an unexpected NotADirectoryError (exit 1)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "d.csv").write_text("a,y\n1,0\n2,1\n3,0\n4,1\n")
    out = tmp_path / "afile" / "sub"
    code, _, err = run(
        "explain", "anova-tpnn", "fit", "--data", tmp_path / "d.csv", "--label", "y",
        "--out", out, *overwrite,
    )  # fmt: skip
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: --out: expected a directory that can be created, got '{out}'"
    )

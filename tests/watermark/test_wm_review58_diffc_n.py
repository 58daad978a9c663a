"""Review 58 (diffC, second reading of 0ddea62): 'watermark train --n 0' names --n again. The
early --test-size check read n before --n was checked, so --n 0 (or -3) was refused as
'--test-size: expected a share leaving training images of 0, got 0.2'."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_quiet


@pytest.mark.parametrize("args", [["--n", "0"], ["--n", "-3", "--test-size", "0.5"]])
def test_train_names_a_bad_n_not_the_test_size(args, tmp_path):
    code, _, err = run_quiet("watermark", "train", *args, "--out", tmp_path / "m")
    assert code == 2 and one_line(err).startswith("trustlab: error: --n: expected a positive"), err

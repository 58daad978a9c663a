"""Review 54: ``safety transfer report --alphas`` without a number says what the option takes."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main


@pytest.mark.parametrize("value", [",", " , ", ",,"])
def test_alphas_without_a_number_is_refused_in_the_options_words(capsys, tmp_path, value):
    # was '--alphas: expected at least 1 element(s), got an array of shape (0,) and dtype float64'
    args = ["safety", "transfer", "report", "--out", tmp_path / "r", "--alphas", value]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: --alphas: expected comma-separated numbers such as 0.5,1,2, got {value!r}"
    )
    assert not (tmp_path / "r").exists()

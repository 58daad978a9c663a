"""The demo task refuses a bad ``max_tokens`` as bad input naming it (review 60: ``-T
max_tokens=abc`` was "unexpected failure: ValueError" with exit 1; 0, -5, 2.7 and true ran,
2.7 as 2 and true as 1)."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.cli.main import main  # noqa: E402
from trustlab.errors import InputError  # noqa: E402
from trustlab.evals.demo import demo  # noqa: E402


@pytest.mark.parametrize("value", ["abc", 0, -5, 2.7, True])
def test_a_bad_max_tokens_is_bad_input(value):
    with pytest.raises(InputError, match="max_tokens: expected an integer >= 1"):
        demo(max_tokens=value)


def test_the_cli_says_it_in_one_line_with_exit_2(tmp_path, capsys):
    out = tmp_path / "logs"
    argv = ["eval", "run", "demo", "--model", "trivial/model", "-T", "max_tokens=abc"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(out)])
    assert exit_info.value.code == 2
    assert "-T max_tokens: expected an integer >= 1, got 'abc'" in capsys.readouterr().err
    assert not out.exists()

"""Review 59: the CLI's early --mode checks read the library's one list of modes
(trustlab.agents.evaluation.MODES) instead of repeating its literal."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main
from trustlab.agents import evaluation


def test_the_modes_are_checkers_and_oracle():
    assert evaluation.MODES == ("checkers", "oracle")
    assert "MODES" in evaluation.__all__


@pytest.mark.parametrize("command", ["evaluate", "learn-weights"])
def test_both_commands_check_mode_against_the_library_list(command, monkeypatch, tmp_path, capsys):
    # a mode the library dropped is refused by the CLI's early check, before the other
    # options (neither --suite nor --cases is given, which would be refused next) or any loading
    monkeypatch.setattr(evaluation, "MODES", ("checkers",))
    args = ["agents", command, "--mode", "oracle"]
    if command == "learn-weights":
        args += ["--out", str(tmp_path / "weighted.json")]
    code, _, err = run_main(args, capsys)
    assert code == 2
    line = one_line(err)
    assert "--mode" in line and "oracle" in line
    assert "--suite" not in line and "--cases" not in line

"""A mistyped choice is refused before any data is read or loaded (review 58, newuser U2).

`robustness train --method margin_cs` was refused only after reading the data (about 8 s) and
`agents evaluate --mode checker` after loading the suite's cases (about 10 s): the slow steps are
replaced by ones that fail, so the old order shows up as their error instead of the option's.
"""

from __future__ import annotations

import pytest

import trustlab.agents.agentdojo as agentdojo
import trustlab.cli.robustness as robustness_cli
from cli_helpers import run_main


def _never(*args, **kwargs):
    raise AssertionError("the slow step ran before the option was checked")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--method",
            "margin_cs",
            "--method: expected one of 'margin-cs', 'gaussian', got 'margin_cs'",
        ),
        ("--arch", "rnn", "--arch: expected one of 'mlp', 'cnn', got 'rnn'"),
    ],
)
def test_robustness_train_checks_choices_before_reading(
    option, value, message, monkeypatch, capsys, tmp_path
):
    monkeypatch.setattr(robustness_cli, "read_data", _never)
    args = ["robustness", "train", "--harmful", "3:8", option, value, "--out", tmp_path / "m"]
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert err.strip() == f"trustlab: error: {message}"


def test_agents_evaluate_checks_mode_before_loading(monkeypatch, capsys):
    monkeypatch.setattr(agentdojo, "agentdojo_cases", _never)
    monkeypatch.setattr(agentdojo, "suite_guardrail", _never)
    code, _, err = run_main(
        ["agents", "evaluate", "--suite", "banking", "--mode", "checker"], capsys
    )
    assert code == 2
    assert (
        err.strip()
        == "trustlab: error: --mode: expected one of 'checkers', 'oracle', got 'checker'"
    )

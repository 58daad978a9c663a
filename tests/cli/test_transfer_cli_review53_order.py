"""Review pass 53: ``safety transfer report`` says its plan before the models load, not after."""

from __future__ import annotations

import sys

import pytest

import trustlab.cli.safety_transfer as cli
import trustlab.safety.transfer as transfer
from cli_helpers import one_line, run_main
from trustlab.errors import InputError

PLAN = (
    "trustlab: steering transfer between a -> b: layer sweeps, an affine map and 1 scale "
    "with 1 random vector"
)


@pytest.fixture
def events(monkeypatch):
    """Model loads and the study's first progress call, written on stderr as they happen; the
    study then stops the command (no model is loaded or trained here)."""

    def load(name):
        sys.stderr.write(f"LOADED {name}\n")
        return name

    def study(*models, progress, **settings):
        progress(1, 2)
        sys.stderr.write("STUDY\n")
        raise InputError("--out: the study stops here in this test", argument="--out")

    monkeypatch.setattr(cli, "_model", load)
    monkeypatch.setattr(transfer, "backdoor_transfer_study", study)


def test_the_plan_comes_before_the_models_load(capsys, events, tmp_path):
    # the plan was said at the study's first progress call, after both models loaded
    args = ["safety", "transfer", "report", "--out", tmp_path / "r", "--source", "a",
            "--target", "b", "--alphas", 1, "--n-random", 1, "--map-kind", "affine"]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[:4] == [PLAN, "LOADED a", "LOADED b", "STUDY"], err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--map-kind", "mlp"), ("--n-random", 0), ("--max-epochs", 0), ("--alphas", "0"),
     ("--seed", -1)],
)  # fmt: skip
def test_bad_options_are_one_line_before_the_plan_and_the_loads(
    capsys, events, tmp_path, option, value
):
    args = ["safety", "transfer", "report", "--out", tmp_path / "r", "--source", "a",
            "--target", "b", option, value]  # fmt: skip
    code, _, err = run_main(args, capsys)
    assert code == 2
    assert one_line(err).startswith(f"trustlab: error: {option}: expected")

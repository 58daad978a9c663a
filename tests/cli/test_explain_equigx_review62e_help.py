"""Diff review 62 E: `explain equigx explain --help` lost --seed's default (0) when --seed became
None (refused without --data) and did not say it is for --data only."""

import pytest
import typer

pytest.importorskip("e3nn")


def test_seed_help_says_data_only_and_its_default():
    from trustlab.cli.explain_equigx import app

    command = typer.main.get_command(app).commands["explain"]
    (seed,) = [p for p in command.params if p.name == "seed"]
    assert seed.default is None
    assert seed.help.startswith("Only with --data") and "default 0" in seed.help

"""Review 64 (CLI): flower-app's run-config range checks name the options, not config.*."""

from __future__ import annotations

from cli_helpers import one_line


def test_flower_app_config_range_names_the_option(run, tmp_path):
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "app", "--seed", 2**64)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --seed: expected an integer below 2**63")
    code, _, err = run("federated", "flower-app", "--out", tmp_path / "app", "--rounds", 2**63)
    assert code == 2
    assert one_line(err).startswith("trustlab: error: --rounds: expected an integer below 2**63")
    assert not (tmp_path / "app").exists()

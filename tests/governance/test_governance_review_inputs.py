"""Review 3 of the participation assessment: odd answers files, and what the outputs keep."""

from __future__ import annotations

import pytest

from cli_helpers import one_line, run_main

HEAD = (
    "kind: participation-answers\nquestionnaire_version: 1.0.0\nsystem: s\n"
    "assessor: {name: a, perspective: self}\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML parses these, then its constructor raises ValueError (not a YAMLError)
        ("date: 2026-13-45\nanswers: {}\n", "month must be in 1..12"),
        ("date: 2026-02-30\nanswers: {}\n", "day is out of range for month"),
        ("answers:\n  data.planning: {rung: !!int x}\n", "a value YAML cannot read"),
        # an alias inside itself: the date conversion recursed without end
        ("answers: {}\nextra: &x [*x]\n", "self-referencing alias"),
    ],
)
def test_unreadable_yaml_values_exit_2_with_one_line(tmp_path, capsys, text, expected):
    path = tmp_path / "odd.yaml"
    path.write_text(HEAD + text)
    for command in (["governance", "assess", path], ["governance", "validate", path]):
        code, _, err = run_main(command, capsys)
        line = one_line(err)
        assert code == 2, err
        assert line.startswith("trustlab: error: ") and "odd.yaml" in line and expected in line

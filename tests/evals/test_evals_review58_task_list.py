"""Review 58 (evals minor): ``trustlab eval tasks`` lists every choice a built-in task's -T
argument takes (misuse listed ``-T suite=code|text`` though ``all`` is accepted)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("inspect_ai")


def test_the_listed_choices_are_the_accepted_ones():
    from trustlab.evals.misuse import DECOMPOSERS
    from trustlab.evals.registry import BUILTIN_TASKS
    from trustlab.safety.context import MODES
    from trustlab.safety.misuse import SUITES

    accepted = {
        ("misuse", "suite"): SUITES,
        ("misuse", "decomposer"): DECOMPOSERS,
        ("casebench", "mode"): MODES,
    }
    listed = {
        (task, name): tuple(choices.split("|"))
        for task, (_, text) in BUILTIN_TASKS.items()
        for name, choices in re.findall(r"-T (\w+)=([a-z]+(?:\|[a-z]+)+)", text)
    }
    assert listed == {key: tuple(value) for key, value in accepted.items()}

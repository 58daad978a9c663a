"""neutrality_pairs(data="") (the CLI's "-T data=") is the shipped set, as neutrality(data="")
is trustlab's own prompts (review 65): it was refused as
"data: expected an existing file, got '.'", naming a path the user never gave."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.evals.neutrality_pairs import neutrality_pairs  # noqa: E402


def test_an_empty_data_argument_is_the_shipped_set():
    task = neutrality_pairs(data="", per_category=1)
    default = neutrality_pairs(per_category=1)
    assert [s.id for s in task.dataset] == [s.id for s in default.dataset]
    assert len(task.dataset) == 7 and task.metadata["data"] == "anthropic"

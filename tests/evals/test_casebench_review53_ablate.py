"""A CASE-Bench ablation is named once however its removals are written: a key of a group that
is removed too ("sender,platform_type") removes nothing more, so it is the ablation "sender"."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")

from trustlab.evals.casebench import casebench  # noqa: E402


def test_a_key_of_a_removed_group_names_no_other_ablation():
    plain = casebench(ablate="sender")
    for written in ("sender,platform_type", "nature_of_the_interaction,sender"):
        task_ = casebench(ablate=written)
        assert task_.metadata["ablate"] == "sender"
        assert [s.input for s in task_.dataset] == [s.input for s in plain.dataset]
    # a key whose group stays is named (data may hold other keys of that group)
    assert (
        casebench(ablate="platform_type,recipient").metadata["ablate"] == "recipient,platform_type"
    )

"""Diff review 65 S of b0add920: `sae report` gives a latent without an intervention score the
row's ``intervention_error`` ('fewer than 2 prompts'); `sae score`'s own summary and result.json
said 'no score' for the same rows."""

from __future__ import annotations

from trustlab.cli.interpret import _no_score


def test_sae_score_gives_the_rows_intervention_error():
    rows = [
        {"intervention": float("nan"), "intervention_error": "fewer than 2 prompts"},
        {"intervention": None},
        {"intervention": 0.7},
    ]
    assert _no_score(rows, "intervention") == {"fewer than 2 prompts": 1, "no score": 1}

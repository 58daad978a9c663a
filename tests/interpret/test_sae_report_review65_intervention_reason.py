"""Review 65 (rsae2): the report gave a latent without an intervention score the reason of the
detection/fuzzing/ranking scorers ("too few examples of a kind shown, or no answer parsed"),
though intervention shows no such examples; ``sae score`` writes why (``intervention_error``,
"fewer than 2 prompts") and its own summary says "no score". The report now says the row's
reason, or "no score" when the row gives none."""

from __future__ import annotations

from trustlab.interpret import sae_report


def test_a_missing_intervention_score_gets_the_rows_reason():
    rows = [
        {"latent": 0, "shuffled": False, "explanation": "cats", "intervention": 0.4},
        {"latent": 1, "shuffled": False, "explanation": "dogs", "intervention": float("nan"),
         "intervention_error": "fewer than 2 prompts"},
        {"latent": 2, "shuffled": False, "explanation": "days", "intervention": None},
    ]  # fmt: skip
    report = sae_report(rows, n_bootstrap=10)
    assert report.means["intervention"]["no_score"] == {"fewer than 2 prompts": 1, "no score": 1}
    assert "without a score: 1 (fewer than 2 prompts); 1 (no score)" in report.summary()

"""HumanStatistics' safe-majority shares are shares of items (review 65 mutation check).

safe_majority_unsafe_context written as a count passed every context test: it is 0 on the
authors' data and the synthetic set, where a count and a share agree.
"""

from __future__ import annotations

from trustlab.safety.context import human_statistics, synthetic_casebench

CONTEXT = synthetic_casebench().contexts[0]


def test_majority_shares():
    votes = {"q0": (15, 3), "q1": (4, 16), "q2": (12, 11), "q3": (2, 1)}
    records = [
        {
            "query": q,
            "category": "c",
            "context": CONTEXT,
            "context_intended_to_be_safe": flag,
            "safe_rate": k / 21,
        }
        for q, ks in votes.items()
        for flag, k in zip((True, False), ks, strict=True)
    ]
    result = human_statistics(records, n_bootstrap=10)
    assert result.safe_majority_safe_context == 0.5  # q0, q2
    assert result.safe_majority_unsafe_context == 0.5  # q1, q2

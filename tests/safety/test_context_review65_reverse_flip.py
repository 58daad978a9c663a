"""HumanStatistics.n_flips counts a majority that flips either way (review 65 mutation check).

Counting only safe-context-safe / unsafe-context-unsafe flips passed every context test: the
authors' data has no safe majority under an unsafe-intended context, so no reverse flip.
"""

from __future__ import annotations

from trustlab.safety.context import human_statistics, synthetic_casebench

CONTEXT = synthetic_casebench().contexts[0]


def _record(query: str, intended: bool, safe_votes: int) -> dict:
    return {
        "query": query,
        "category": "c",
        "context": CONTEXT,
        "context_intended_to_be_safe": intended,
        "safe_rate": safe_votes / 21,
    }


def test_reverse_flip_counts():
    # q0 flips as expected, q1 flips the other way, q2 keeps its majority
    votes = {"q0": (15, 3), "q1": (4, 16), "q2": (12, 11)}
    records = [
        _record(q, flag, k)
        for q, ks in votes.items()
        for flag, k in zip((True, False), ks, strict=True)
    ]
    result = human_statistics(records, n_bootstrap=10)
    assert result.n_flips == 2

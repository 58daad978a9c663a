"""Human statistics of a set with a record whose query has no pair (second review)."""

from __future__ import annotations

from trustlab.safety.context import human_statistics, load_casebench, synthetic_casebench


def test_the_summary_says_records_without_a_pair_enter_the_pooled_figures_only():
    records = synthetic_casebench().records()
    records.append(dict(records[0], query="a query asked once", safe_rate=0.0, scores=None))
    stats = human_statistics(load_casebench(records), n_bootstrap=20)
    assert stats.n_unpaired == 1 and stats.n_queries == 30
    first = stats.summary().splitlines()[0]
    assert "30 queries x 2 contexts" in first
    assert "1 record(s) without a pair (pooled figures only)" in first
    paired = human_statistics(synthetic_casebench(), n_bootstrap=20)
    assert "without a pair" not in paired.summary()
    assert stats.safe_rate_safe_context != paired.safe_rate_safe_context  # it is counted there

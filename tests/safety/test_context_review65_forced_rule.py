"""context_scores reads the forced-unsafe categories from data.FORCED_UNSAFE (review 65).

metrics.py wrote its own copy of the tuple ("child-related crimes",) beside data.FORCED_UNSAFE,
which CaseBench.soft_label / human_safe use: a category added to the one would not reach the
other, and ContextScores.human_safe would disagree with CaseBench.human_safe.
"""

from __future__ import annotations

from trustlab.safety.context import context_scores, metrics


def test_forced_categories_come_from_the_one_rule(monkeypatch):
    args = (["safe", "safe"], [0.9, 0.9], "binary")
    kwargs = {"categories": ["a", "b"], "n_bootstrap": 0}
    assert context_scores(*args, **kwargs).human_safe.tolist() == [True, True]
    monkeypatch.setattr(metrics, "FORCED_UNSAFE", ("b",))
    assert context_scores(*args, **kwargs).human_safe.tolist() == [True, False]

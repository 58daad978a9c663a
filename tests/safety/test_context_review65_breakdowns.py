"""ContextScores' per-category breakdown and the human label at y = 0.5, against pandas and the
stated rule (review 65: mutants that passed every context test).

- by_category's accuracy computed over all items, and its safe recall over the category's items
  instead of its human-safe ones, passed 255 tests;
- the human label safe iff y > 0.5 written y >= 0.5 passed them too (k/21 never ties, but
  context_scores takes any soft label).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from trustlab.safety.context import context_scores, make_synthetic_outputs, synthetic_casebench


def test_by_category_matches_pandas():
    data = synthetic_casebench()
    records = make_synthetic_outputs(data, "binary", random_state=5)
    result = context_scores(
        [r["toy-judge"] for r in records],
        data.safe_rate,
        "binary",
        categories=data.categories,
        intended_safe=data.intended_safe,
        n_bootstrap=0,
    )
    frame = pd.DataFrame(
        {
            "category": data.categories,
            "human": data.human_safe,  # the forced-unsafe rule applied
            "pred": [r["toy-judge"] == "safe" for r in records],
        }
    )
    frame["right"] = frame["human"] == frame["pred"]
    groups = frame.groupby("category")
    accuracy = groups["right"].mean()
    safe_recall = frame[frame["human"]].groupby("category")["pred"].mean()
    assert [row["category"] for row in result.by_category] == sorted(accuracy.index)
    for row in result.by_category:
        name = row["category"]
        assert row["items"] == len(groups.get_group(name))
        assert row["mismatches"] == int((~groups.get_group(name)["right"]).sum())
        assert np.isclose(row["accuracy"], accuracy[name], rtol=0, atol=1e-12)
        if name in safe_recall.index:
            assert np.isclose(row["safe_recall"], safe_recall[name], rtol=0, atol=1e-12)
        else:
            assert row["safe_recall"] is None
    # the set exercises both: categories with mistakes and a recall unlike the accuracy
    assert any(r["accuracy"] < 1 for r in result.by_category)
    assert any(
        r["safe_recall"] is not None and r["safe_recall"] != r["accuracy"]
        for r in result.by_category
    )


def test_a_soft_label_of_one_half_is_human_unsafe():
    result = context_scores(["unsafe", "safe"], [0.5, 0.75], "binary", n_bootstrap=0)
    assert result.accuracy == 1.0
    assert result.human_safe.tolist() == [False, True]

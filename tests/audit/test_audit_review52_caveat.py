"""Audit review 52: the caveat after the headline equalized odds difference judges the rows a
rate is computed from, not the group's size. A rare class's TPR in a group of 300 rows rests on
its few rows of that class; the line said 'the TPRs of g1 (300 audited rows) and g2 (300 audited
rows)' with no word that each TPR came from 2 or 3 rows."""

from __future__ import annotations

import pandas as pd

from trustlab.audit import run_audit
from trustlab.audit.group_metrics import equalized_odds_caveat


def _rare_class_table() -> pd.DataFrame:
    """Two groups of 300 rows, a class 'rare' with 2 rows in g1 and 3 in g2. The model finds
    one of g1's (TPR 0.5) and none of g2's (TPR 0): that sets the equalized odds difference."""
    rows = []
    for g, n_rare, found in (("g1", 2, 1), ("g2", 3, 0)):
        y = ["a"] * 150 + ["b"] * (150 - n_rare) + ["rare"] * n_rare
        pred = y[: 300 - n_rare] + ["rare"] * found + ["a"] * (n_rare - found)
        rows += [{"g": g, "y": t, "yhat": p} for t, p in zip(y, pred, strict=True)]
    return pd.DataFrame(rows)


def test_a_rare_class_rate_names_its_few_rows_and_is_called_noisy(tmp_path):
    result = run_audit(
        _rare_class_table(), label="y", group="g", pred="yhat", out=tmp_path,
        sections=["overview", "fairness"],
    )  # fmt: skip
    source = result.headline()["yhat"]["equalized_odds_difference_source"]
    assert source["class"] == "rare" and source["rate"] == "TPR"
    assert source["estimate"] == 0.5
    assert source["groups"] == {"g1": 300, "g2": 300}
    assert source["rate_rows"] == {"g1": 2, "g2": 3}
    line = next(x for x in result.summary().splitlines() if x.startswith("  yhat:"))
    assert (
        "the TPRs of g1 (300 audited rows, 2 truly rare) and g2 (300 audited rows, 3 truly " in line
    )
    assert "g1 and g2 have under 30 rows truly rare: noisy rates" in line


def test_an_fpr_names_the_rows_outside_the_class_and_large_bases_get_no_warning():
    source = {
        "class": "yes",
        "estimate": 0.2,
        "lower": 0.1,
        "upper": 0.3,
        "rate": "FPR",
        "groups": {"u": 500, "v": 400},
        "rate_rows": {"u": 250, "v": 120},
        "where_defined": 0.2,
    }
    assert equalized_odds_caveat(source, one_vs_rest=False) == (
        " (95% interval [0.1000, 0.3000]; the FPRs of u (500 audited rows, 250 not yes) and "
        "v (400 audited rows, 120 not yes))"
    )
    source["rate_rows"] = {"u": 250, "v": 29}
    assert equalized_odds_caveat(source, one_vs_rest=False).endswith(
        "; v has under 30 rows not yes: noisy rates)"
    )

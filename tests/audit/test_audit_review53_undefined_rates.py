"""The fairness section's per-group rates table (review 53): the TPR of a group with no audited row
of the class (and the FPR of one whose every row is of it) is 0/0; the table showed fairlearn's 0
as '0.0 [0.0000, 0.0000]', which reads as a group whose positives are all missed. It now reads
'undefined' (report.json keeps fairlearn's 0)."""

import numpy as np
from test_group_metrics_undefined import _Context, without_high_in_east

from trustlab.audit.sections.fairness import _group_metrics

UNDEFINED = "undefined"  # the cell the page shows


def rates_table(ctx):
    _, blocks = _group_metrics(ctx)
    return next(b for b in blocks if getattr(b, "caption", "").startswith("yhat: selection rate"))


def test_a_rate_without_rows_reads_undefined():
    y, pred, groups = without_high_in_east()  # east has no row of class high
    table = rates_table(_Context(y, pred, groups))
    rows = {(row[0], row[1]): row for row in table.rows}
    east = rows[("high", "east")]
    assert east[5:7] == [UNDEFINED, "n/a"]  # TPR, its interval
    assert isinstance(east[3], float) and isinstance(east[7], float)  # selection rate, FPR
    assert all(isinstance(row[5], float) for key, row in rows.items() if key != ("high", "east"))
    assert f"'{UNDEFINED}': a TPR of a group with no audited row of the class" in table.caption


def test_a_class_no_audited_row_holds_reads_undefined_in_every_group():
    rng = np.random.default_rng(3)
    y = rng.choice(["a", "b"], size=200)
    groups = rng.choice(["east", "north"], size=200)
    pred = y.copy()
    pred[:3] = "c"  # a class predicted, held by no audited row: no group has its TPR
    table = rates_table(_Context(y, pred, groups))
    tprs = {row[1]: row[5] for row in table.rows if row[0] == "c"}
    assert tprs == {"east": UNDEFINED, "north": UNDEFINED}


def test_no_undefined_cell_or_caption_when_every_rate_is_defined():
    rng = np.random.default_rng(1)
    y = rng.choice(["low", "mid", "high"], size=300)
    groups = rng.choice(["east", "north"], size=300)
    pred = np.where(rng.random(300) < 0.8, y, "mid")
    table = rates_table(_Context(y, pred, groups))
    assert UNDEFINED not in [cell for row in table.rows for cell in row]
    assert UNDEFINED not in table.caption

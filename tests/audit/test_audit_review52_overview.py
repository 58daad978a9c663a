"""Audit review 52: the overview's per-group accuracy table has a row per group (its audited
rows, then one column per model). It had one column per group, up to 1,000 of them beside a
'model' column, and no row counts: a group's accuracy of 1.0 from 2 audited rows, or n/a for a
group the split left on the training side, read like any other."""

import numpy as np
from sklearn.metrics import accuracy_score
from test_overview_many_groups import _context

from trustlab.audit.sections import overview
from trustlab.report import Table


def test_the_group_accuracy_table_has_a_row_per_group_with_its_audited_rows():
    g_test = np.array(["a"] * 6 + ["b"] * 2, dtype=object)
    y_test = np.array(["no", "yes"] * 4, dtype=object)
    predictions = {
        "m1": np.array(["no", "yes", "no", "no", "yes", "yes", "no", "yes"], dtype=object),
        "m2": np.array(["yes"] * 8, dtype=object),
    }
    train_groups, train_labels = ["a", "c", "c"], ["no", "yes", "no"]  # c: training rows only
    ctx = _context(g_test, y_test, predictions, train_groups, train_labels, group="région",
                   mode="zoo")  # fmt: skip
    section = overview.build(ctx)
    table = next(
        b
        for b in section.blocks
        if isinstance(b, Table) and b.caption.startswith("Accuracy within")
    )
    assert table.columns == ["région", "audited rows", "m1", "m2"]
    expected = []
    for group, n in (("a", 6), ("b", 2)):
        rows = g_test == group
        expected.append(
            [group, n, *(accuracy_score(y_test[rows], p[rows]) for p in predictions.values())]
        )
    assert table.rows == [*expected, ["c", 0, None, None]]
    audited = {d["group"]: d["audited_rows"] for d in section.data["groups"]}
    assert audited == {"a": 6, "b": 2, "c": 0}  # report.json holds the new column


def test_the_rows_per_group_caption_names_train_and_test_only_for_the_default_models():
    def caption(mode):
        predictions = {"m": np.array(["no"] * 4, dtype=object)}
        ctx = _context(["a", "a", "b", "b"], ["no", "yes"] * 2, predictions, group="g", mode=mode)
        return next(b for b in overview.build(ctx).blocks if isinstance(b, Table)).caption

    # a --pred audit has no training rows: it said 'Rows per group (train and test)'
    assert caption("predictions") == (
        "Rows per group (every row audited) and the share of each label within the group"
    )
    assert caption("model").startswith("Rows per group (every row audited)")
    assert caption("zoo").startswith("Rows per group (train and test)")

"""The audit's per-label DCP table names its upper-bound methods in words the caption explains
(it showed the result keys greedy_lm, mean_lm, unexplained) and reads 'true label', not 'true
true label', for a label column named 'true label'."""

import numpy as np
import pandas as pd

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import fairness
from trustlab.report import Table


def test_per_label_table_explains_its_methods_and_names_the_label_column_once():
    rng = np.random.default_rng(0)
    y_test = rng.choice(["cat", "dog", "emu"], 60).astype(object)
    g_test = rng.choice(["a", "b"], 60).astype(object)
    pred = np.where(rng.random(60) < 0.7, y_test, rng.choice(["cat", "dog"], 60)).astype(object)
    ctx = AuditContext(
        dataset="t",
        label="true label",
        group="g",
        labels=np.array(["cat", "dog", "emu"]),
        feature_names=[],
        X_train=pd.DataFrame(index=range(2)),
        X_test=pd.DataFrame(index=range(60)),
        y_train=np.array(["cat", "dog"], dtype=object),
        y_test=y_test,
        g_train=np.array(["a", "b"], dtype=object),
        g_test=g_test,
        predictions={"m": pred},
        mode="predictions",
    )
    section = fairness.build(ctx)
    table = next(
        b for b in section.blocks if isinstance(b, Table) and b.caption.startswith("Per-label")
    )
    assert table.columns[1] == "true label"
    methods = {row[-1] for row in table.rows}
    assert methods <= {"mean", "greedy", "mean+LM", "greedy+LM"}
    for name in ("mean,", "greedy,", "+LM,", "greedy+LM also"):
        assert name in table.caption

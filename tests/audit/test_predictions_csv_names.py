"""predictions.csv: a group (or label) column named like a model's probability column,
'<model>:proba:<class>', was overwritten by the probabilities (the group values were lost from
the file and the header held the name once)."""

import numpy as np
import pandas as pd

from trustlab.audit.context import AuditContext
from trustlab.audit.outputs import predictions_frame


def test_a_group_column_named_like_a_probability_column_keeps_its_values():
    group = "m:proba:yes"
    y = np.array(["no", "yes", "yes"], dtype=object)
    g = np.array(["a", "b", "a"], dtype=object)
    proba = np.array([[0.9, 0.1], [0.3, 0.7], [0.4, 0.6]])
    ctx = AuditContext(
        dataset="t", label="y", group=group, labels=np.array(["no", "yes"]), feature_names=[],
        X_train=pd.DataFrame(), X_test=pd.DataFrame(index=range(3)),
        y_train=np.array([], dtype=object), y_test=y,
        g_train=np.array([], dtype=object), g_test=g,
        predictions={"m": np.array(["no", "yes", "yes"], dtype=object)},
        probabilities={"m": proba}, mode="model",
    )  # fmt: skip
    frame = predictions_frame(ctx)
    assert frame.columns.tolist() == ["row", "y", group, "m", "m:proba:no", f"pred:{group}"]
    assert frame[group].tolist() == ["a", "b", "a"]
    assert frame[f"pred:{group}"].tolist() == [0.1, 0.7, 0.6]
    assert frame["m:proba:no"].tolist() == [0.9, 0.3, 0.4]

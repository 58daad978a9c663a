"""predictions.csv: a label named ``row`` and a group named ``input_row`` left the file without
a row id (the id column ``input_row`` was overwritten by the group column)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit.context import AuditContext
from trustlab.audit.outputs import predictions_frame


def _context(label: str, group: str, model: str) -> AuditContext:
    y = np.array(["no", "yes", "yes"], dtype=object)
    return AuditContext(
        dataset="t", label=label, group=group, labels=np.array(["no", "yes"]), feature_names=[],
        X_train=pd.DataFrame(), X_test=pd.DataFrame(index=range(3)),
        y_train=np.array([], dtype=object), y_test=y,
        g_train=np.array([], dtype=object), g_test=np.array(["a", "b", "a"], dtype=object),
        predictions={model: np.array(["no", "no", "yes"], dtype=object)}, mode="predictions",
        rows_test=np.array([10, 11, 12]),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("label", "group", "model", "id_column"),
    [
        ("row", "input_row", "m", "input_row_2"),
        ("input_row", "g", "row", "input_row_2"),
        ("row", "input_row", "input_row_2", "input_row_3"),
    ],
)
def test_the_row_id_keeps_a_column_of_its_own(label, group, model, id_column):
    frame = predictions_frame(_context(label, group, model))
    assert frame.columns.tolist() == [id_column, label, group, model]
    assert frame[id_column].tolist() == [10, 11, 12]
    assert frame[group].tolist() == ["a", "b", "a"]
    assert frame[label].tolist() == ["no", "yes", "yes"]

"""A --pred column holding a class that no row's label holds (a typo, another coding): the
overview said '3 classes of 'y'' and 'Label: y (0, 1, 2)' for a label of two classes, and
nothing said that every such prediction is an error."""

import numpy as np
import pandas as pd

from trustlab.audit.context import AuditContext
from trustlab.audit.sections import overview
from trustlab.report import Paragraph


def _context(pred):
    y = np.array([0, 1] * 10)
    g = np.array(["a"] * 10 + ["b"] * 10, dtype=object)
    return AuditContext(
        dataset="t",
        label="y",
        group="g",
        labels=np.unique(np.concatenate([y, pred])),  # as class_labels(y, pred)
        feature_names=[],
        X_train=pd.DataFrame(),
        X_test=pd.DataFrame(index=range(20)),
        y_train=np.array([], dtype=int),
        y_test=y,
        g_train=np.array([], dtype=object),
        g_test=g,
        predictions={"p": np.asarray(pred)},
        mode="predictions",
    )


def test_a_predicted_class_no_label_holds_is_named_not_counted_as_a_class():
    pred = np.array([0, 1] * 10)
    pred[:3] = 2
    section = overview.build(_context(pred))
    assert section.summary.startswith(
        "20 rows, 2 classes of 'y', 2 groups of 'g'. Predicted but never the label: 2."
    )
    assert section.blocks[0].text.startswith("Dataset t: 20 rows. Label: y (0, 1). ")
    assert section.data["predicted_not_in_label"] == {"p": {"2": 3}}
    warnings = [b.text for b in section.blocks if isinstance(b, Paragraph) and b.kind == "warning"]
    assert len(warnings) == 1
    assert warnings[0].startswith("Classes predicted that no row's 'y' holds: p predicts 2 (3 ")


def test_predictions_within_the_label_classes_add_no_warning():
    section = overview.build(_context(np.array([1, 0] * 10)))
    assert section.summary.startswith("20 rows, 2 classes of 'y', 2 groups of 'g'. Best")
    assert section.data["predicted_not_in_label"] == {}
    assert not [b for b in section.blocks if isinstance(b, Paragraph) and b.kind == "warning"]

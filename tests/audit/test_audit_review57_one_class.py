"""A label of one class audited with ``pred`` was refused naming ``--pred`` ("a score or
probability is not a predicted label: threshold it first") when the predictions held two classes
the label lacks; the label is at fault, and the zoo and --model modes name it."""

import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def test_a_label_of_one_class_with_predictions_is_refused_naming_the_label(tmp_path):
    table = pd.DataFrame(
        {"y": ["mid"] * 6, "g": ["a", "b"] * 3, "p": ["mid", "low", "high", "mid", "low", "mid"]}
    )
    with pytest.raises(
        InputError, match=r"^label: expected at least 2 classes, got only \['mid'\]"
    ):
        run_audit(table, label="y", group="g", pred="p", out=tmp_path / "out", sections=[])
    assert not (tmp_path / "out").exists()

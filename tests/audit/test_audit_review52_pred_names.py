"""Audit review 52: predictions that hold none of the label's classes (other names for them:
'Approved'/'Denied' for 'approved'/'denied', or a model trained on 'yes'/'no') are refused. They
were audited: accuracy 0.000, a DCP and fairness rates of the misnamed classes, with the
'predicted but never the label' warning only on the page, not on the command's output."""

import numpy as np
import pandas as pd
import pytest

from trustlab.audit import run_audit
from trustlab.errors import InputError


def _table(pred) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    y = rng.choice(["approved", "denied"], 120)
    return pd.DataFrame(
        {"x": rng.normal(size=120), "y": y, "g": rng.choice(["a", "b"], 120), "yhat": pred(y)}
    )


def test_predictions_with_none_of_the_label_classes_are_refused(tmp_path):
    frame = _table(lambda y: np.char.capitalize(y.astype(str)))
    with pytest.raises(InputError) as e:
        run_audit(frame, label="y", group="g", pred="yhat", out=tmp_path / "o")
    assert str(e.value) == (
        "pred: expected predictions among the label's classes ('approved', 'denied'), got none "
        "of them: 'Approved', 'Denied' (check that both use the same class names)"
    )
    assert not (tmp_path / "o").exists()


def test_a_model_predicting_none_of_the_label_classes_is_refused(tmp_path):
    from sklearn.dummy import DummyClassifier

    frame = _table(lambda y: y)
    model = DummyClassifier().fit(frame[["x"]], np.where(frame["y"] == "approved", "yes", "no"))
    with pytest.raises(InputError, match=r"^model: expected predictions among the label's"):
        run_audit(frame.drop(columns="yhat"), label="y", group="g", model=model, out=tmp_path)


def test_predictions_sharing_a_class_with_the_label_are_still_audited(tmp_path):
    # one misnamed class among correct ones: audited, with the overview's warning (b9818a8)
    frame = _table(lambda y: np.where(y == "denied", "Denied", y))
    result = run_audit(
        frame, label="y", group="g", pred="yhat", out=tmp_path, sections=["overview"]
    )
    overview = result.report.sections[0].data
    assert overview["predicted_not_in_label"] == {
        "yhat": {"Denied": int((frame.y == "denied").sum())}
    }

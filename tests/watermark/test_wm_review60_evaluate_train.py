"""evaluate_predictions(train=...) without visible marks ended in numpy's 'a cannot be empty'
(in trustlab watermark train: after training, before the model was saved); min_opacity and
random_state of the wrong type in raw ValueError/TypeError (review 60)."""

from __future__ import annotations

import pytest

from trustlab.errors import InputError
from trustlab.watermark import evaluate_predictions, synthesize


@pytest.fixture(scope="module")
def clean3():
    return synthesize(3, random_state=0, clean_fraction=1.0)  # no marks to draw: cheap


def test_evaluate_predictions_checks_train_and_its_own_arguments(clean3):
    preds = [None] * len(clean3)  # refused before the predictions are read
    with pytest.raises(InputError, match="train: expected a dataset with visible marks"):
        evaluate_predictions(preds, clean3, train=clean3)
    with pytest.raises(InputError, match="train: expected None or a WatermarkDataset"):
        evaluate_predictions(preds, clean3, train="x")
    with pytest.raises(InputError, match="min_opacity: expected a number"):
        evaluate_predictions(preds, clean3, min_opacity="a")
    with pytest.raises(InputError, match="random_state"):
        evaluate_predictions(preds, clean3, random_state="x")
    with pytest.raises(InputError, match="random_state"):
        evaluate_predictions(preds, clean3, random_state=-1)

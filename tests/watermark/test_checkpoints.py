"""The shipped predictor loads, says how it was made, and refuses bad requests by name."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark.checkpoints import (
    CHECKPOINT,
    PARAMS,
    TRAIN_DATA,
    checkpoint_data,
    checkpoint_info,
    load_checkpoint,
)
from trustlab.watermark.nr import WatermarkPredictor


def test_shipped_predictor_loads_with_its_record():
    model = load_checkpoint()
    assert isinstance(model, WatermarkPredictor) and model.input_size_ == 256
    info = checkpoint_info()
    assert info["name"] == CHECKPOINT and info["params"] == PARAMS
    assert info["train_data"]["random_state"] == TRAIN_DATA["random_state"]
    assert len(model.history_.epoch) == PARAMS["max_epochs"]
    assert {"visibility", "location", "controls"} <= set(info["test_evaluation"])


def test_checkpoint_data_is_the_generator_with_the_recorded_arguments():
    small = checkpoint_data("test", random_state=5, n=3)
    assert len(small) == 3 and small.random_state == 5
    with pytest.raises(InputError, match="part"):
        checkpoint_data("validation")

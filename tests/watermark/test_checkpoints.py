"""The shipped predictor loads, says how it was made, and refuses bad requests by name."""

import pytest

from trustlab.errors import InputError
from trustlab.watermark.checkpoints import (
    CHECKPOINT,
    PARAMS,
    SMALL_PARAMS,
    SMALL_TRAIN_DATA,
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
    assert info["train_data"]["seeds"] == list(TRAIN_DATA["seeds"])
    assert model.level_readout == PARAMS["level_readout"] == "level_head"
    assert len(model.history_.epoch) == PARAMS["max_epochs"]
    assert {"visibility", "location", "controls"} <= set(info["test_evaluation"])


def test_checkpoint_data_is_the_generator_with_the_recorded_arguments():
    small = checkpoint_data("test", random_state=5, n=3)
    assert len(small) == 3 and small.random_state == 5
    with pytest.raises(InputError, match="part"):
        checkpoint_data("validation")


def test_training_images_are_the_seeds_parts_in_order(monkeypatch):
    """The recipe's images are ``n_per_seed`` of each seed, one after the other; ``n`` takes the
    first of them (here with 3 per seed, so that a short run covers two seeds)."""
    import numpy as np

    from trustlab.watermark.synth import synthesize

    monkeypatch.setitem(TRAIN_DATA, "n_per_seed", 3)
    got = checkpoint_data("train", n=5)
    gen = {k: TRAIN_DATA[k] for k in ("kinds", "clean_fraction")}
    a = synthesize(3, random_state=TRAIN_DATA["seeds"][0], **gen)
    b = synthesize(2, random_state=TRAIN_DATA["seeds"][1], **gen)
    np.testing.assert_array_equal(got.images, np.concatenate([a.images, b.images]))
    np.testing.assert_array_equal(got.scores, np.concatenate([a.scores, b.scores]))
    assert got.kinds == a.kinds + b.kinds and got.cells == a.cells + b.cells
    assert len(got.payloads) == 5 and got.random_state == TRAIN_DATA["seeds"][0]
    one = checkpoint_data("train", random_state=7)
    assert len(one) == 3 and one.random_state == 7
    with pytest.raises(InputError, match="^n: expected at most 48"):
        checkpoint_data("train", n=49)
    with pytest.raises(InputError, match="^n:"):
        checkpoint_data("train", n=0)


def test_the_previous_recipe_is_kept_for_the_ablations():
    assert SMALL_TRAIN_DATA["n"] == 3000 and SMALL_TRAIN_DATA["random_state"] == 101
    assert SMALL_PARAMS["max_epochs"] == 100 and SMALL_PARAMS["level_readout"] == "score"
    small = checkpoint_data("train_small", n=2)
    assert len(small) == 2 and small.random_state == 101

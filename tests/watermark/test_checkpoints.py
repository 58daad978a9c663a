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
    import dataclasses

    import numpy as np

    from trustlab.watermark.synth import synthesize

    monkeypatch.setitem(TRAIN_DATA, "n_per_seed", 3)
    got = checkpoint_data("train", n=7)
    gen = {k: TRAIN_DATA[k] for k in ("kinds", "clean_fraction")}
    seeds = TRAIN_DATA["seeds"]
    parts = [
        synthesize(c, random_state=sd, **gen) for sd, c in zip(seeds[:3], (3, 3, 1), strict=True)
    ]
    assert len(got) == 7 and got.random_state == seeds[0] and got.ssim_cache is None
    for f in dataclasses.fields(got):
        value = getattr(got, f.name)
        if f.name in ("size", "random_state", "ssim_cache"):
            continue
        if isinstance(value, np.ndarray):
            want = np.concatenate([getattr(p, f.name) for p in parts])
            np.testing.assert_array_equal(value, want, err_msg=f.name)
        elif f.name == "payloads":
            flat = [q for p in parts for q in p.payloads]
            assert [None if q is None else q.tolist() for q in value] == [
                None if q is None else q.tolist() for q in flat]  # fmt: skip
        else:
            assert value == tuple(v for p in parts for v in getattr(p, f.name)), f.name
    np.testing.assert_allclose(got.ssim, np.concatenate([p.ssim for p in parts]))
    one = checkpoint_data("train", random_state=7)
    assert len(one) == 3 and one.random_state == 7
    import trustlab.watermark.synth as synth

    made = []
    monkeypatch.setattr(synth, "synthesize", lambda n, **kw: made.append(n))
    with pytest.raises(InputError, match="^n: expected at most 48"):
        checkpoint_data("train", n=49)
    assert made == []  # refused before any image was generated
    with pytest.raises(InputError, match="^n:"):
        checkpoint_data("train", n=0)


def test_the_previous_recipe_is_kept_for_the_ablations():
    assert SMALL_TRAIN_DATA["n"] == 3000 and SMALL_TRAIN_DATA["random_state"] == 101
    assert SMALL_PARAMS["max_epochs"] == 100 and SMALL_PARAMS["level_readout"] == "score"
    small = checkpoint_data("train_small", n=2)
    assert len(small) == 2 and small.random_state == 101

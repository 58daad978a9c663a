"""The no-reference predictor's mechanics: inputs, residual channels, the heatmap read-out,
checkpointed fit, save/load. Its accuracy on held-out synthetic data is tested in
test_nr_claims.py with the shipped model."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy import ndimage

from trustlab.errors import InputError
from trustlab.watermark.nr import WatermarkPredictor, as_images
from trustlab.watermark.vocabulary import (
    CELLS,
    LEVELS,
    cell_of_box,
    level_index,
    level_of_score,
    orientation_of_mask,
)

torch.set_num_threads(1)

TINY = {"input_size": 32, "widths": (4, 8, 8, 8), "batch_size": 4, "random_state": 3}


def _data(n=6, side=32, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, side, side, 3), dtype=np.uint8)
    masks = np.zeros((n, side, side), bool)
    for i in range(n):
        r, c = rng.integers(0, side // 2, size=2)
        masks[i, r : r + side // 3, c : c + side // 2] = True
    scores = rng.uniform(0, 5, size=n)
    types = [("logo", "text", "pattern", "invisible")[i % 4] for i in range(n)]
    return images, scores, masks, types


@pytest.fixture(scope="module")
def fitted():
    images, scores, masks, types = _data()
    model = WatermarkPredictor(max_epochs=2, **TINY)
    return model.fit(images, scores=scores, masks=masks, content_types=types), _data()


def test_residual_channels_equal_scipy_gaussian_high_pass(fitted):
    model, _ = fitted
    rng = np.random.default_rng(1)
    x = rng.random((2, 3, 20, 24)).astype(np.float32)
    got = model.net_.residual(torch.from_numpy(x)).numpy()
    # reflect padding without repeating the edge pixel is scipy's "mirror"; radius 3 = 2 sigma
    smooth = ndimage.gaussian_filter(x, sigma=(0, 0, 1.5, 1.5), truncate=2.0, mode="mirror")
    np.testing.assert_allclose(got, (x - smooth) * model.residual_gain, atol=2e-6)


@pytest.mark.parametrize("channels_last", [False, True])
def test_residual_in_float64_and_either_layout_equals_scipy(fitted, channels_last):
    model, _ = fitted
    net = copy.deepcopy(model.net_).double()
    x = np.random.default_rng(2).random((3, 3, 9, 31))  # the smallest side reflects 3 pixels
    t = torch.from_numpy(x)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
    got = net.residual(t).numpy()
    taps = net.blur.numpy()  # the network's own taps (its float32 Gaussian, here in float64)
    smooth = ndimage.correlate1d(x, taps, axis=3, mode="mirror")
    smooth = ndimage.correlate1d(smooth, taps, axis=2, mode="mirror")
    np.testing.assert_allclose(got, (x - smooth) * model.residual_gain, rtol=0, atol=1e-12)


class _FixedHeat(torch.nn.Module):
    """Stands in for the network: a chosen heatmap, fixed scores (the level head agrees with
    the score head)."""

    def __init__(self, heat, score=2.5):
        super().__init__()
        self.heat = torch.as_tensor(heat, dtype=torch.float32)
        self.score = score

    def forward(self, x):
        n = x.shape[0]
        logit = torch.logit(self.heat.clamp(1e-4, 1 - 1e-4))
        levels = torch.zeros(n, 5)
        levels[:, level_index(level_of_score(self.score))] = 3.0
        return (
            torch.full((n,), self.score),
            levels,
            torch.zeros(n, 4),
            logit[None].expand(n, -1, -1),
        )


def _predict_heat(heat, shape=(2, 96, 160, 3)):
    model = WatermarkPredictor(**TINY)
    model.net_, model.input_size_ = _FixedHeat(heat), 64
    # another size than the network's input; one view (the fixed map does not mirror)
    return model.predict(np.zeros(shape, np.uint8), flip_average=False)


def test_box_cell_and_orientation_are_read_from_the_whole_region(fitted):
    heat = np.zeros((8, 8))
    heat[5:7, 0:4] = 0.9  # horizontal, bottom rows
    pred = _predict_heat(heat)
    # brute force: the cells of the region scaled onto 96 x 160 pixels
    box = (0, 5 * 96 // 8, 4 * 160 // 8, 7 * 96 // 8)
    assert tuple(pred.boxes[0]) == box
    assert pred.cells[0] == cell_of_box(box, width=160, height=96) == "Bottom-left"
    assert pred.orientations[0] == orientation_of_mask(heat[5:7, 0:4] > 0) == "horizontal"
    assert pred.present.all() and pred.located.all()  # level moderate: a watermark is seen
    np.testing.assert_allclose(pred.expected_scores, pred.level_probabilities @ [5, 4, 3, 2, 1])
    assert pred.heatmap(0).shape == (96, 160)
    assert pred.heatmap(0)[80, 30] == pytest.approx(0.9, abs=1e-3)


def test_a_mark_in_several_parts_gets_one_box_around_all_of_them(fitted):
    """As the generator boxes the true mask (a pattern, a text): all parts, not the largest."""
    heat = np.zeros((8, 8))
    for r, c in [(1, 1), (1, 6), (6, 1), (6, 6)]:
        heat[r, c] = 0.9
    heat[1, 2] = 0.9  # the largest part, top-left
    pred = _predict_heat(heat)
    assert tuple(pred.boxes[0]) == (1 * 20, 1 * 12, 7 * 20, 7 * 12)
    assert pred.cells[0] == "Center"


def test_a_far_stray_cell_is_trimmed_as_wmarkgpt_trims_boxes(fitted):
    """WMarkGPT's box leaves out the 5 % of region cells farthest from the centroid."""
    heat = np.zeros((16, 16))
    heat[10:12, 0:10] = 0.9  # 20 cells
    heat[0, 15] = 0.9  # 1 stray cell: floor(0.05 x 21) = 1 cell is trimmed at each end
    pred = _predict_heat(heat, shape=(1, 160, 160, 3))
    assert tuple(pred.boxes[0]) == (0, 100, 100, 120)
    assert pred.cells[0] == "Bottom-left"


def test_an_empty_heatmap_gives_no_box(fitted):
    model = WatermarkPredictor(**TINY)
    model.net_, model.input_size_ = _FixedHeat(np.full((4, 4), 0.1)), 32
    pred = model.predict(np.zeros((1, 32, 32, 3), np.uint8))
    # the level (moderate) says a watermark is seen: the most likely cells stand for its place
    assert pred.present[0] and not pred.located[0]
    assert tuple(pred.boxes[0]) == (0, 0, 32, 32)
    model.net_ = _FixedHeat(np.full((4, 4), 0.1), score=4.5)  # invisible: nothing to place
    pred = model.predict(np.zeros((1, 32, 32, 3), np.uint8))
    assert not pred.present[0] and not pred.located[0] and (pred.boxes[0] == -1).all()
    assert pred.facts(0).present is False


def test_predictions_have_consistent_fields(fitted):
    model, (images, *_) = fitted
    pred = model.predict(images)
    n = len(images)
    assert pred.scores.shape == (n,) and np.all((pred.scores >= 0) & (pred.scores <= 5))
    np.testing.assert_allclose(pred.level_probabilities.sum(1), 1, atol=1e-12)
    assert all(c in CELLS for c in pred.cells)
    facts = pred.facts(0)
    assert facts.level == pred.levels[0] and facts.objects_known is False
    assert "image(s)" in pred.summary()
    assert set(pred.to_dict()) >= {"scores", "levels", "boxes", "cells"}


def test_predictions_do_not_depend_on_the_batch(fitted):
    model, (images, *_) = fitted
    a = model.predict(images, batch_size=64)
    b = model.predict(images, batch_size=1)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-5)
    np.testing.assert_allclose(a.heatmaps.astype(float), b.heatmaps.astype(float), atol=2e-3)


def test_flip_average_is_the_mean_of_the_image_and_its_mirror(fitted):
    """The oracle: two plain predictions, of the images and of their mirror images, averaged
    by hand (the mirror's heatmap mirrored back)."""
    model, (images, *_) = fitted
    both = model.predict(images, flip_average=True)
    plain = model.predict(images, flip_average=False)
    mirror = model.predict(images[:, :, ::-1], flip_average=False)
    np.testing.assert_allclose(both.scores, (plain.scores + mirror.scores) / 2, atol=1e-5)
    np.testing.assert_allclose(
        both.level_probabilities,
        (plain.level_probabilities + mirror.level_probabilities) / 2,
        atol=1e-5,
    )
    heat = (plain.heatmaps.astype(float) + mirror.heatmaps.astype(float)[:, :, ::-1]) / 2
    np.testing.assert_allclose(both.heatmaps.astype(float), heat, atol=2e-3)
    assert both.flip_average and not plain.flip_average
    assert not np.allclose(plain.scores, mirror.scores, atol=1e-4)  # the views do differ


def test_flip_averaged_predictions_mirror_with_the_image(fitted):
    """Invariance: with flip averaging a mirrored image gets the same score and levels, and
    the mirrored heatmap and box."""
    model, (images, *_) = fitted
    a = model.predict(images, flip_average=True)
    b = model.predict(images[:, :, ::-1], flip_average=True)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-5)
    np.testing.assert_allclose(
        a.heatmaps.astype(float), b.heatmaps.astype(float)[:, :, ::-1], atol=2e-3
    )
    side = images.shape[2]
    for box_a, box_b in zip(a.boxes, b.boxes, strict=True):
        if box_a[0] >= 0:
            assert abs((side - box_b[2]) - box_a[0]) <= 1 and abs((side - box_b[0]) - box_a[2]) <= 1


def test_the_score_is_the_mean_of_the_two_heads(fitted):
    model, (images, *_) = fitted
    pred = model.predict(images)
    expected = pred.level_probabilities @ np.asarray([5.0, 4.0, 3.0, 2.0, 1.0])
    np.testing.assert_allclose(pred.expected_scores, expected, atol=1e-12)
    np.testing.assert_allclose(pred.scores, (pred.regressed_scores + expected) / 2, atol=1e-12)
    assert pred.levels == tuple(level_of_score(s) for s in pred.scores)


def test_level_head_readout_gives_the_most_probable_level_and_a_score_in_its_bin(fitted):
    """``level_readout="level_head"``: the level is the level head's argmax, and the score the
    default read-out's score moved to the nearest point of that level's bin, kept 0.01 under the
    next level (checked image by image against level_of_score and a brute-force nearest point)."""
    model, (images, *_) = fitted
    default = model.predict(images)
    head = copy.deepcopy(model).set_params(level_readout="level_head").predict(images)
    np.testing.assert_array_equal(head.level_probabilities, default.level_probabilities)
    for i in range(len(images)):
        k = int(np.argmax(head.level_probabilities[i]))
        assert head.levels[i] == LEVELS[k] == level_of_score(head.scores[i])
        low, high = 4.0 - k, (5.0 if k == 0 else 4.99 - k)
        s = default.scores[i]
        nearest = low if s < low else min(s, high)
        assert head.scores[i] == pytest.approx(nearest, abs=1e-12)
        assert level_of_score(round(float(head.scores[i]), 2)) == LEVELS[k]
    assert head.present.tolist() == [lv != "invisible" for lv in head.levels]
    assert head.level_readout == "level_head" and default.level_readout == "score"
    assert any(level_of_score(s) != lv for s, lv in zip(default.scores, head.levels, strict=True))


@given(
    st.lists(st.floats(0.0, 5.0), min_size=1, max_size=20),
    st.lists(st.integers(0, 4), min_size=20, max_size=20),
)
def test_clipping_into_a_level_keeps_a_score_of_that_level_and_moves_no_other(scores, levels):
    from trustlab.watermark.nr import _clip_into_levels

    k = np.asarray(levels[: len(scores)])
    out = _clip_into_levels(np.asarray(scores), k)
    for s, level, o in zip(scores, k, out, strict=True):
        # shown with two decimals or stored in float32, the score keeps its level
        for shown in (o, round(float(o), 2), float(np.float32(o))):
            assert level_of_score(shown) == LEVELS[level]
        low, high = 4.0 - level, (5.0 if level == 0 else 4.99 - level)
        if low <= s <= high:
            assert o == s
        else:  # moved to the nearest end of [low, high]
            assert o == pytest.approx(low if s < low else high, abs=1e-12)


def test_level_readout_is_checked_saved_and_not_part_of_the_fit(fitted, tmp_path):
    model, (images, *_) = fitted
    bad = copy.deepcopy(model).set_params(level_readout="argmax")
    with pytest.raises(InputError, match="level_readout"):
        bad.predict(images)
    with pytest.raises(InputError, match="level_readout"):
        bad.check_params()
    head = copy.deepcopy(model).set_params(level_readout="level_head")
    head.save(tmp_path / "h")
    again = WatermarkPredictor.load(tmp_path / "h")
    assert again.level_readout == "level_head"
    np.testing.assert_array_equal(again.predict(images).scores, head.predict(images).scores)
    x = torch.zeros(1, 3, 4, 4)
    args = (x, np.zeros(1), np.zeros((1, 4, 4), bool), ["logo"])
    assert head._fingerprint(*args) == model._fingerprint(*args)


def test_save_load_round_trip(fitted, tmp_path):
    model, (images, *_) = fitted
    model.save(tmp_path / "m")
    again = WatermarkPredictor.load(tmp_path / "m")
    np.testing.assert_array_equal(model.predict(images).scores, again.predict(images).scores)
    assert again.history_ == model.history_


def _subnormal(net) -> int:
    tiny = torch.finfo(torch.float32).tiny
    return sum(
        int(((t != 0) & (t.abs() < tiny)).sum())
        for t in net.state_dict().values()
        if t.is_floating_point()
    )


def test_subnormal_weights_are_zeroed_on_load_with_the_same_predictions(fitted, tmp_path):
    """A model trained before fit flushed subnormal floats kept weights under float32's smallest
    normal number (half of the shipped model's), which slowed the CPU 2.6x; load zeroes them."""
    model, (images, *_) = fitted
    assert _subnormal(model.net_) == 0
    model.save(tmp_path / "a")
    loaded = WatermarkPredictor.load(tmp_path / "a")
    with torch.no_grad():
        weight = next(loaded.net_.parameters())
        weight.view(-1)[:7] = torch.finfo(torch.float32).tiny / 4
    assert _subnormal(loaded.net_) == 7
    planted = loaded.predict(images)
    loaded.save(tmp_path / "b")
    again = WatermarkPredictor.load(tmp_path / "b")
    assert _subnormal(again.net_) == 0
    np.testing.assert_allclose(again.predict(images).scores, planted.scores, rtol=0, atol=1e-12)


def test_interrupted_fit_resumes_to_the_same_model(tmp_path):
    images, scores, masks, types = _data()
    full = WatermarkPredictor(max_epochs=2, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )

    class Stop(Exception):
        pass

    def stop_after_first(epoch, total, history):
        if epoch == 1:
            raise Stop

    folder = tmp_path / "ck"
    with pytest.raises(Stop):
        WatermarkPredictor(max_epochs=2, checkpoint_dir=folder, **TINY).fit(
            images, scores=scores, masks=masks, content_types=types, progress=stop_after_first
        )
    resumed = WatermarkPredictor(max_epochs=2, checkpoint_dir=folder, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    np.testing.assert_array_equal(full.predict(images).scores, resumed.predict(images).scores)
    assert full.history_.loss == resumed.history_.loss
    with pytest.raises(InputError, match="checkpoint_dir"):
        WatermarkPredictor(max_epochs=2, checkpoint_dir=folder, **TINY).fit(
            images, scores=scores[::-1].copy(), masks=masks, content_types=types
        )


@pytest.mark.parametrize(
    ("images", "argument"),
    [
        (np.zeros((2, 16, 16), np.uint8), "images"),
        (np.zeros((2, 16, 16, 4), np.uint8), "images"),
        (np.zeros((1, 16, 16, 3), np.float32), "images"),
        ([], "images"),
        ("img.png", "images"),
    ],
)
def test_bad_images(images, argument):
    with pytest.raises(InputError, match=argument):
        as_images(images)


def test_bad_training_labels_and_parameters():
    images, scores, masks, types = _data(n=4)
    model = WatermarkPredictor(max_epochs=1, **TINY)
    with pytest.raises(InputError, match="scores"):
        model.fit(images, scores=scores + 6, masks=masks, content_types=types)
    with pytest.raises(InputError, match="masks"):
        model.fit(images, scores=scores, masks=masks[:, :8], content_types=types)
    with pytest.raises(InputError, match="content_types"):
        model.fit(images, scores=scores, masks=masks, content_types=["logo", "stamp", "x", "y"])
    with pytest.raises(InputError, match="input_size"):
        WatermarkPredictor(input_size=40).fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="widths"):
        WatermarkPredictor(widths=(4, 4)).fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="threshold"):
        model.net_, model.input_size_ = _FixedHeat(np.zeros((4, 4))), 32
        model.predict(images, threshold=1.5)


def _weights(model):
    return torch.cat([v.flatten() for v in model.net_.state_dict().values()])


def test_invisible_marks_do_not_train_the_heatmap():
    """The masks of marks scored above ``heatmap_max_score`` have no effect on the fit (the
    trained weights are identical when those masks are moved); with None they have one."""
    images, scores, masks, types = _data(n=8, seed=4)
    scores = np.array([0.5, 1.5, 4.5, 2.0, 4.8, 3.0, 4.2, 1.0])
    moved = masks.copy()
    hidden = scores > 4.0
    moved[hidden] = np.roll(masks[hidden], 9, axis=2)
    assert (moved != masks).any()

    def fit(m, cap):
        model = WatermarkPredictor(max_epochs=2, heatmap_max_score=cap, **TINY)
        return _weights(model.fit(images, scores=scores, masks=m, content_types=types))

    assert torch.equal(fit(masks, 4.0), fit(moved, 4.0))
    assert not torch.equal(fit(masks, None), fit(moved, None))
    # a cap of 5 keeps every image, as None does
    assert torch.equal(fit(masks, 5.0), fit(masks, None))
    with pytest.raises(InputError, match="heatmap_max_score"):
        fit(masks, 7.0)


def test_unfitted_model_says_so():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="fit"):
        WatermarkPredictor().predict(np.zeros((1, 32, 32, 3), np.uint8))


def _head_and_rest(model):
    """The weights only the score/level/content terms reach (the pooled head), and the others."""
    state = model.net_.state_dict()
    head = torch.cat([v.flatten() for k, v in state.items() if k.startswith("head.")])
    rest = torch.cat([v.flatten() for k, v in state.items() if not k.startswith("head.")])
    return head, rest


def test_zero_weight_terms_leave_what_only_they_train_untouched():
    """With the score, level and content weights 0 (pretraining the location head), the head
    keeps its initial weights exactly, neither moved nor decayed, and the labels of those terms
    have no effect; the heatmap and encoder do learn."""
    images, scores, masks, types = _data(n=8, seed=5)
    heat_only = {"score_weight": 0, "level_weight": 0, "content_weight": 0}
    init = WatermarkPredictor(max_epochs=1, learning_rate=1e-30, weight_decay=0, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    head0, rest0 = _head_and_rest(init)
    pre = WatermarkPredictor(max_epochs=2, **heat_only, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    head, rest = _head_and_rest(pre)
    assert torch.equal(head, head0)
    assert (rest - rest0).abs().max() > 1e-3
    other = WatermarkPredictor(max_epochs=2, **heat_only, **TINY).fit(
        images, scores=5 - scores, masks=masks, content_types=types[::-1]
    )
    assert torch.equal(_weights(other), _weights(pre))
    # with the default weights the head learns, and the labels matter
    full = WatermarkPredictor(max_epochs=2, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    assert (_head_and_rest(full)[0] - head0).abs().max() > 1e-3
    with pytest.raises(InputError, match="loss weight"):
        WatermarkPredictor(**heat_only, heatmap_weight=0, **TINY).fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="level_weight"):
        WatermarkPredictor(level_weight=-1, **TINY).fit(
            images, scores=scores, masks=masks, content_types=types
        )


def test_warm_start_continues_from_the_fitted_weights(tmp_path):
    """warm_start=True starts from the fitted network (a fit that cannot move the weights
    returns them unchanged), warm_start=False from a fresh initialisation; a resumed warm start
    gives the same model as an uninterrupted one."""
    images, scores, masks, types = _data(n=8, seed=6)
    pre = WatermarkPredictor(max_epochs=2, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    before = _weights(pre).clone()
    frozen = {"learning_rate": 1e-30, "weight_decay": 0.0, "max_epochs": 1}
    cold = WatermarkPredictor(**{**TINY, "random_state": 11}, **frozen).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    model = copy.deepcopy(pre).set_params(warm_start=True, random_state=11, **frozen)
    model.fit(images, scores=scores, masks=masks, content_types=types)
    assert torch.equal(_weights(model), before)
    assert not torch.allclose(_weights(cold), before)
    # a cold refit of the same fitted object starts over
    again = copy.deepcopy(pre).set_params(random_state=11, **frozen)
    again.fit(images, scores=scores, masks=masks, content_types=types)
    assert torch.equal(_weights(again), _weights(cold))

    # fine-tuning with steps, interrupted after its first epoch and resumed
    class Stop(Exception):
        pass

    def stop_after_first(epoch, total, history):
        if epoch == 1:
            raise Stop

    def tuned(**kw):
        return copy.deepcopy(pre).set_params(warm_start=True, max_epochs=2, **kw)

    whole = tuned().fit(images, scores=scores, masks=masks, content_types=types)
    assert not torch.equal(_weights(whole), before)
    folder = tmp_path / "ft"
    with pytest.raises(Stop):
        tuned(checkpoint_dir=folder).fit(
            images, scores=scores, masks=masks, content_types=types, progress=stop_after_first
        )
    resumed = tuned(checkpoint_dir=folder).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    assert torch.equal(_weights(resumed), _weights(whole))
    # a warm start from other weights does not resume that state
    images2, scores2, masks2, types2 = _data(n=8, seed=8)
    other = WatermarkPredictor(max_epochs=1, **TINY).fit(
        images2, scores=scores2, masks=masks2, content_types=types2
    )
    with pytest.raises(InputError, match="checkpoint_dir"):
        other.set_params(warm_start=True, max_epochs=2, checkpoint_dir=folder).fit(
            images, scores=scores, masks=masks, content_types=types
        )


def test_warm_start_refuses_another_architecture_and_bad_params(tmp_path):
    images, scores, masks, types = _data(n=4, seed=7)
    pre = WatermarkPredictor(max_epochs=1, **TINY).fit(
        images, scores=scores, masks=masks, content_types=types
    )
    with pytest.raises(InputError, match="warm_start"):
        copy.deepcopy(pre).set_params(warm_start=True, widths=(4, 8, 8, 16)).fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="warm_start"):
        copy.deepcopy(pre).set_params(warm_start=True, residual_gain=2.0).fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="warm_start"):
        copy.deepcopy(pre).set_params(warm_start="yes").fit(
            images, scores=scores, masks=masks, content_types=types
        )
    with pytest.raises(InputError, match="params"):
        pre.set_params(lr=1.0)
    # saved and loaded, the new parameters come back
    pre.set_params(score_weight=0.5, warm_start=True).save(tmp_path / "m")
    loaded = WatermarkPredictor.load(tmp_path / "m")
    assert (loaded.score_weight, loaded.warm_start) == (0.5, True)

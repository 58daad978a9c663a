"""RegionSparseClassifier and BlackBoxClassifier: fit, predict, explain, save/load, resume, inputs."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("skimage")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    TAU_GRID,
    BlackBoxClassifier,
    RegionSparseClassifier,
    bam_lite,
    kept_fraction,
    pixel_grid_mask,
    superpixels,
)

SMALL = dict(n_segments=16, pretrain_epochs=1, max_epochs=2, batch_size=16, random_state=0)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def data():
    ds = bam_lite(40, size=32, object_source="shapes", random_state=3)
    seg = superpixels(ds.images, n_segments=16)
    return ds, seg


@pytest.fixture(scope="module")
def dynamic_model(data):
    ds, seg = data
    return RegionSparseClassifier(**SMALL).fit(ds.images, ds.labels, segments=seg)


@pytest.fixture(scope="module")
def fixed_model(data):
    ds, seg = data
    return RegionSparseClassifier(tau=0.3, **SMALL).fit(ds.images, ds.labels, segments=seg)


def test_explanation_is_consistent_with_its_own_masks(dynamic_model, data):
    ds, seg = data
    r = dynamic_model.explain(ds.images, segments=seg)
    assert r.mask.shape == ds.masks.shape and r.group_mask.dtype == bool
    # the pixel mask is the group mask spread over the segments, and kept_fraction is exact
    for i in range(len(r)):
        np.testing.assert_array_equal(r.mask[i], r.group_mask[i][seg[i]])
        assert r.kept_fraction[i] == kept_fraction(seg[i], r.group_mask[i][: seg[i].max() + 1])
    assert set(np.round(r.tau, 10)) <= set(np.round(TAU_GRID, 10))
    np.testing.assert_allclose(r.probabilities.sum(1), 1.0, atol=1e-12)
    assert (r.prediction == r.probabilities.argmax(1)).all()
    # selected groups are exactly those with sigmoid(mu) > 0.5 at the chosen tau
    np.testing.assert_array_equal(r.group_mask, r.scores > 0)
    np.testing.assert_array_equal(
        dynamic_model.predict(ds.images, segments=seg), dynamic_model.classes_[r.prediction]
    )


def test_predictions_ignore_pixels_outside_the_selection(fixed_model, data):
    """Check 1 through the estimator: noise outside the hard mask leaves the probabilities equal."""
    ds, seg = data
    r = fixed_model.explain(ds.images, segments=seg)
    rng = np.random.default_rng(0)
    noisy = np.where(r.mask[:, None], ds.images, rng.random(ds.images.shape)).astype(np.float32)
    p = fixed_model.classify_selection(noisy, r.group_mask, segments=seg)
    # the selection's own probabilities, recomputed on the clean images, up to batch rounding
    np.testing.assert_allclose(
        fixed_model.classify_selection(ds.images, r.group_mask, segments=seg),
        r.probabilities,
        atol=1e-6,
    )
    assert np.abs(p - r.probabilities).max() <= 1e-6
    kept = r.mask.any(axis=(1, 2))
    assert kept.any()
    inside = np.where(r.mask[:, None], rng.random(ds.images.shape), ds.images).astype(np.float32)
    q = fixed_model.classify_selection(inside, r.group_mask, segments=seg)
    assert np.abs(q - r.probabilities)[kept].max() > 1e-4


def test_dynamic_tau_is_monotone_in_delta(dynamic_model, data):
    ds, seg = data
    taus = [dynamic_model.explain(ds.images, segments=seg, delta=d).tau for d in (0.3, 0.6, 0.99)]
    assert (taus[0] <= taus[1]).all() and (taus[1] <= taus[2]).all()


def test_fixed_tau_model_uses_its_level(fixed_model, data):
    ds, seg = data
    r = fixed_model.explain(ds.images, segments=seg)
    assert r.mode == "fixed" and (r.tau == 0.3).all() and r.certain.all()
    other = fixed_model.explain(ds.images, segments=seg, tau=1.0)
    assert (other.tau == 1.0).all()


def test_save_load_round_trip(dynamic_model, data, tmp_path):
    ds, seg = data
    dynamic_model.save(tmp_path / "m")
    back = RegionSparseClassifier.load(tmp_path / "m")
    a = dynamic_model.explain(ds.images, segments=seg)
    b = back.explain(ds.images, segments=seg)
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    np.testing.assert_array_equal(a.tau, b.tau)
    assert back.get_params() == {**dynamic_model.get_params(), "checkpoint_dir": None}
    assert back.history_ == dynamic_model.history_


def test_interrupted_fit_resumes_to_the_same_weights(data, tmp_path):
    ds, seg = data
    params = dict(SMALL, checkpoint_dir=tmp_path / "ck")
    full = RegionSparseClassifier(**SMALL).fit(ds.images, ds.labels, segments=seg)

    class Stop(Exception):
        pass

    def stop_after_two(epoch, total, history):
        if epoch == 2:
            raise Stop

    with pytest.raises(Stop):
        RegionSparseClassifier(**params).fit(
            ds.images, ds.labels, segments=seg, progress=stop_after_two
        )
    resumed = RegionSparseClassifier(**params).fit(ds.images, ds.labels, segments=seg)
    for a, b in zip(
        full.selector_.state_dict().values(), resumed.selector_.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert resumed.history_.loss == full.history_.loss
    # a folder left by another fit is refused
    with pytest.raises(InputError, match="checkpoint_dir"):
        RegionSparseClassifier(**dict(params, tau=0.5)).fit(ds.images, ds.labels, segments=seg)


def test_history_records_pretraining_then_schedules(dynamic_model):
    h = dynamic_model.history_
    assert h.epochs == (1, 2, 3)
    assert h.expected_kept[0] == 1.0 and h.lambda_sparsity[0] == 0.0
    assert h.lambda_sparsity[1] == pytest.approx(10.0 / 100)  # the schedule from joint epoch 0
    assert "3 epochs" in h.summary()


def test_overlays_and_plot(dynamic_model, data, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ds, seg = data
    r = dynamic_model.explain(ds.images[:3], segments=seg[:3])
    ov = r.overlay(0)
    assert ov.shape == (32, 32, 3) and ov.min() >= 0 and ov.max() <= 1
    outside = ~r.mask[0]
    np.testing.assert_allclose(ov[outside], 0.25 * ds.images[0].transpose(1, 2, 0)[outside])
    paths = r.save_overlays(tmp_path / "ov", scale=2)
    assert len(paths) == 3 and all(p.stat().st_size > 0 for p in paths)
    assert r.plot() is not None
    d = r.to_dict()
    assert d["mode"] == "dynamic" and len(d["labels"]) == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(tau=0.0), "tau"),
        (dict(tau="sometimes"), "tau"),
        (dict(delta=1.5), "delta"),
        (dict(segmentation="quickshift"), "segmentation"),
        (dict(sparsity="l0"), "sparsity"),
        (dict(colour_jitter=1.0), "colour_jitter"),
        (dict(pretrain_epochs=-1), "pretrain_epochs"),
        (dict(lambda_covariance="0.1"), "lambda_covariance"),
        (dict(weight_decay=True), "weight_decay"),
    ],
)
def test_bad_parameters_are_named(data, kwargs, match):
    ds, seg = data
    with pytest.raises(InputError, match=match):
        RegionSparseClassifier(**dict(SMALL, **kwargs)).fit(ds.images, ds.labels, segments=seg)


def test_numpy_numbers_are_parameters_like_python_ones():
    """A grid of np.float32 values (np.linspace, a config read with numpy) was refused as 'an
    array of shape ()'."""
    numbers = dict(lambda_covariance=np.float32(0.5), weight_decay=np.float64(1e-4),
                   fill=np.float32(0.0), colour_jitter=np.float32(0.1))  # fmt: skip
    plain = {key: float(value) for key, value in numbers.items()}
    assert (
        RegionSparseClassifier(**numbers)._check_params()
        == RegionSparseClassifier(**plain)._check_params()
    )


def test_delta_with_a_fixed_level_is_refused_not_ignored(dynamic_model, data):
    ds, seg = data
    with pytest.raises(InputError, match="^delta: expected no certainty threshold with a fixed"):
        dynamic_model.explain(ds.images[:2], segments=seg[:2], tau=0.25, delta=0.9)


def test_bad_inputs_are_named(dynamic_model, data):
    ds, seg = data
    big = bam_lite(2, size=40, random_state=0)
    with pytest.raises(InputError, match="32x32"):
        dynamic_model.predict(big.images)
    with pytest.raises(InputError, match="segments"):
        dynamic_model.predict(ds.images[:2], segments=seg[:3])
    with pytest.raises(InputError, match="segments"):
        dynamic_model.predict(ds.images[:2], segments=seg[:2, :16])
    for delta in (0.0, 1.01, -0.5):
        with pytest.raises(InputError, match="delta"):
            dynamic_model.explain(ds.images[:2], segments=seg[:2], delta=delta)
    with pytest.raises(InputError, match="X"):
        dynamic_model.predict(ds.images[:2] * 3)
    with pytest.raises(InputError, match="y"):
        RegionSparseClassifier(**SMALL).fit(ds.images, ds.labels[:-1], segments=seg)
    with pytest.raises(InputError, match="X"):
        RegionSparseClassifier(**SMALL).fit(ds.images[:, :, :30, :30], ds.labels)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RegionSparseClassifier().predict(ds.images)
    with pytest.raises(InputError, match="path"):
        RegionSparseClassifier.load(ds.name)


def test_blackbox_pixel_sees_only_its_lattice(data, tmp_path):
    ds, _ = data
    bb = BlackBoxClassifier(kept_pixels=0.2, max_epochs=1, batch_size=16, random_state=0)
    bb.fit(ds.images, ds.labels)
    np.testing.assert_array_equal(bb.mask_, pixel_grid_mask((32, 32), 0.2))
    rng = np.random.default_rng(1)
    noisy = np.where(bb.mask_[None, None], ds.images, rng.random(ds.images.shape))
    np.testing.assert_array_equal(
        bb.predict_proba(noisy.astype(np.float32)), bb.predict_proba(ds.images)
    )
    bb.save(tmp_path / "bb")
    back = BlackBoxClassifier.load(tmp_path / "bb")
    np.testing.assert_array_equal(back.predict_proba(ds.images), bb.predict_proba(ds.images))
    plain = BlackBoxClassifier(max_epochs=1, batch_size=16, random_state=0).fit(
        ds.images, ds.labels
    )
    assert plain.mask_.all()
    with pytest.raises(InputError, match="kept_pixels"):
        BlackBoxClassifier(kept_pixels=0.0).fit(ds.images, ds.labels)


def test_checkpoint_of_a_fit_on_other_segments_is_refused(data, tmp_path):
    """The fingerprint of checkpoint_dir covered images, labels and settings but not the
    superpixels: a fit on other segments in the same folder returned the model trained on the
    first ones."""
    ds, seg = data
    halves = np.zeros_like(seg)
    halves[:, :, 16:] = 1
    params = dict(SMALL, pretrain_epochs=0, max_epochs=1, checkpoint_dir=tmp_path / "ck")
    first = RegionSparseClassifier(**params).fit(ds.images, ds.labels, segments=seg)
    with pytest.raises(InputError, match="checkpoint_dir"):
        RegionSparseClassifier(**params).fit(ds.images, ds.labels, segments=halves)
    again = RegionSparseClassifier(**params).fit(ds.images, ds.labels, segments=seg)
    for a, b in zip(
        first.selector_.state_dict().values(), again.selector_.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # the same segments: the saved state


def test_numpy_typed_parameters_save_and_load(data, tmp_path):
    """tau=np.float32(0.3), n_segments=np.int64(16), fill=np.float32(0) trained, then save raised
    a raw TypeError (numpy numbers are not JSON)."""
    ds, seg = data
    numbers = dict(tau=np.float32(0.3), n_segments=np.int64(16), fill=np.float32(0.0),
                   random_state=np.int64(0), selector_widths=(np.int64(8), np.int64(16)))  # fmt: skip
    model = RegionSparseClassifier(**dict(SMALL, pretrain_epochs=0, max_epochs=1, **numbers))
    model.fit(ds.images[:16], ds.labels[:16], segments=seg[:16])
    back = RegionSparseClassifier.load(model.save(tmp_path / "m"))
    assert back.get_params() == model.get_params()
    assert type(back.tau) is float and type(back.n_segments) is int
    np.testing.assert_array_equal(
        back.predict_proba(ds.images[:4], segments=seg[:4]),
        model.predict_proba(ds.images[:4], segments=seg[:4]),
    )
    bb = BlackBoxClassifier(max_epochs=1, batch_size=16, learning_rate=np.float32(1e-3))
    bb.fit(ds.images[:16], ds.labels[:16])
    assert BlackBoxClassifier.load(bb.save(tmp_path / "bb")).learning_rate == bb.learning_rate

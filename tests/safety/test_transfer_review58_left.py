"""Review 58 (left): ActivationMap's fit summary and targets of extreme magnitude."""

import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.safety.transfer import ActivationMap, MapFit


def _rows(n, seed=58):
    rng = np.random.default_rng(seed)
    source = rng.normal(size=(n, 4))
    return source, source @ rng.normal(size=(4, 3)) + 1.0


def test_the_steps_note_is_for_max_epochs_none_and_says_what_happened():
    # the note "fewer than the about 3,500 that max_epochs=None aims at" also showed for a
    # max_epochs=200 the user gave, and after an early stop it said "the fit may stop short"
    source, target = _rows(40)
    settings = {"kind": "affine", "solver": "adam", "patience": 3}
    auto = ActivationMap(**settings).fit(source, target).fit_
    given = ActivationMap(max_epochs=200, **settings).fit(source, target).fit_
    assert auto.max_epochs == given.max_epochs == 200 and auto.adam_steps == given.adam_steps
    assert "Adam steps" in auto.summary() and "Adam steps" not in given.summary()
    assert auto.max_epochs_auto and not given.max_epochs_auto
    assert MapFit.from_dict(auto.to_dict(), auto.history).summary() == auto.summary()
    values = auto.to_dict() | {"epochs": 186, "best_epoch": 186, "adam_steps": 372}
    stopped = MapFit.from_dict(values | {"stopped_early": True}).summary()
    assert "the fit may stop short" not in stopped
    assert "was down to 1.2% of its start at epoch 186" in stopped  # 0.5 (1 + cos(pi 186/200))
    values |= {"epochs": 200, "best_epoch": 200, "adam_steps": 400}
    assert (
        "its cap of 200 epochs bound: the fit may stop short"
        in MapFit.from_dict(values | {"stopped_early": False}).summary()
    )
    values.pop("max_epochs_auto")  # saved before review 58: 200 epochs read as the cap
    assert MapFit.from_dict(values).max_epochs_auto
    assert not MapFit.from_dict(values | {"max_epochs": 150}).max_epochs_auto


@pytest.mark.parametrize("power", [700, -700])
@pytest.mark.parametrize("solver", ["lstsq", "adam"])
def test_a_target_scaled_by_a_power_of_2_gives_the_same_affine_map(solver, power):
    # the target scale and the FVU squared raw target values: past ~1e154 they overflowed (a
    # RuntimeWarning, R^2 NaN, Adam trained on NaN), below ~1e-154 they vanished (R^2 NaN)
    source, target = _rows(60, seed=5)
    settings = {"kind": "affine", "solver": solver, "batch_size": 16, "max_epochs": 3}
    plain = ActivationMap(**settings).fit(source, target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = ActivationMap(**settings).fit(source, np.ldexp(target, power))
    np.testing.assert_allclose(np.ldexp(scaled.coef_, -power), plain.coef_, rtol=1e-12)
    for name in ("r2", "held_out_r2", "cosine", "held_out_cosine"):
        assert getattr(scaled.fit_, name) == pytest.approx(getattr(plain.fit_, name), rel=1e-12)


def test_the_autoencoder_refuses_a_spread_its_float32_weights_cannot_hold():
    # its raw-unit weights are float32: at 2^700 they overflowed (NaN map), at 2^-700 they were 0
    source, target = _rows(30)
    for power, name in [(700, "target"), (-700, "target"), (700, "source")]:
        if name == "source":
            args = (np.ldexp(source, power), target)
        else:
            args = (source, np.ldexp(target, power))
        with pytest.raises(InputError, match=f"^{name}: expected activations whose standard"):
            ActivationMap(max_epochs=1).fit(*args)


def test_the_autoencoder_refuses_a_target_mean_its_float32_bias_cannot_hold():
    # a target of ordinary spread around 1e39 (past float32's 3.4e38): bias2 was inf, R^2 NaN
    source, target = _rows(30)
    with pytest.raises(
        InputError, match=r"^target: expected activations whose mean lies within \+-1e\+30 for"
    ):
        ActivationMap(max_epochs=1).fit(source, target + 1e39)
    # a mean inside the limit is not refused (with a spread of 1e24, so the mean also lies within
    # the 1e6 standard deviations of FLOAT32_OFFSET)
    ActivationMap(max_epochs=1).fit(source, target * 1e24 + 1e29)

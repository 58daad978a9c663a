"""Review 63: a regression target at an extreme scale fits the same model, scaled.

The target's standard deviation was taken on its squares: past ~1e154 they overflowed (scale inf,
every prediction NaN), below ~1e-154 they vanished (y refused as constant). The held-out RMSE,
``importance_``, ``score`` (R^2), the components' summary and ``component_stability`` squared
the values too (inf / NaN / 0 with RuntimeWarnings). Scaling by a power of 2 is exact, so the
fits below are the unit fit times the scale up to rounding (measured 0 to 3e-16 relative).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from trustlab._numerics import root_mean_square

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability  # noqa: E402

_RTOL = 1e-9  # rounding only: the scaled fits see the same numbers times a power of 2


def _data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(70, 1))  # 70 rows: 11 are held out, so the held-out RMSE is computed
    return x, x[:, 0] ** 2 + x[:, 0]


def _fit(scale: float, seed: int = 0) -> ANOVATPNN:
    x, y = _data()
    model = ANOVATPNN(n_basis=2, max_epochs=3, random_state=seed, task="regression")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return model.fit(x, y * scale)


@pytest.fixture(scope="module")
def unit_fits():
    return [_fit(1.0, seed) for seed in (0, 1)]


@pytest.mark.parametrize("scale", [2.0**1000, 2.0**-1000])
def test_extreme_target_scale_fits_the_scaled_model(unit_fits, scale):
    x, y = _data()
    fits = [_fit(scale, seed) for seed in (0, 1)]
    model, unit = fits[0], unit_fits[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.testing.assert_allclose(model.predict(x) / scale, unit.predict(x), rtol=_RTOL)
        np.testing.assert_allclose(model.importance_ / scale, unit.importance_, rtol=_RTOL)
        held_out = model.history_["validation_score"] / scale
        assert held_out == pytest.approx(unit.history_["validation_score"], rel=_RTOL)
        assert model.score(x, y * scale) == pytest.approx(unit.score(x, y), rel=_RTOL)
        assert f"{unit.importance_[0] * scale:.4g}" in model.components(x).summary()
        scaled, plain = component_stability(fits, x), component_stability(unit_fits, x)
    np.testing.assert_allclose(scaled.normalised_variance, plain.normalised_variance, rtol=_RTOL)
    np.testing.assert_allclose(scaled.mean_correlation, plain.mean_correlation, rtol=_RTOL)


def test_root_mean_square_at_any_scale():
    values = np.array([[3.0, 4.0], [0.0, 0.0]])
    for scale in (1.0, 1e200, 1e-200):
        got = root_mean_square(values * scale, axis=1)
        np.testing.assert_allclose(got, [np.sqrt(12.5) * scale, 0.0], rtol=1e-15)
    ordinary = np.random.default_rng(0).normal(size=(5, 7))  # the same bits as the plain formula
    assert np.array_equal(root_mean_square(ordinary, axis=0), np.sqrt((ordinary**2).mean(axis=0)))
    assert root_mean_square(ordinary) == np.sqrt((ordinary**2).mean())

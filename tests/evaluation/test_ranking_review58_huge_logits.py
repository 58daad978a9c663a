"""Review 58: temperature scaling of logits near 1e306 with a fitted T = 0.01 stays finite.

``logits / 0.01`` is infinite from about 1.8e306 on; the NLL of the fit was NaN there, so the
bounded search stopped short of 0.01 (it returned 0.028 below) and the tempered outputs held inf.
"""

import numpy as np
import pytest
from scipy import special

from trustlab.evaluation import rank_models
from trustlab.evaluation._calibration import fit_temperature, temperature_nll


def _huge_model(seed: int):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 30)
    logits = rng.normal(size=(30, 3)) * 0.1
    logits[np.arange(30), labels] += 1.0  # right on every item: the NLL falls to T = 0.01
    logits[:5] = 0.0
    logits[np.arange(5), labels[:5]] = 5e306
    logits[np.arange(5), (labels[:5] + 1) % 3] = -5e306
    return logits, labels


def test_nll_is_finite_and_matches_the_direct_formula_where_that_is_finite():
    logits, labels = _huge_model(58)
    assert temperature_nll(logits, labels, 0.01) == pytest.approx(
        _direct_nll(logits[5:], labels[5:], 0.01) * 25 / 30, rel=1e-12
    )  # the five huge rows are certain and right: they add 0
    moderate = np.random.default_rng(7).normal(size=(20, 4)) * 30
    y = np.arange(20) % 4
    for t in (0.01, 0.7, 100.0):
        assert temperature_nll(moderate, y, t) == pytest.approx(
            _direct_nll(moderate, y, t), rel=1e-12
        )


def _direct_nll(logits, labels, t):
    scaled = logits / t
    return float(
        np.mean(special.logsumexp(scaled, axis=1) - scaled[np.arange(len(labels)), labels])
    )


@pytest.mark.parametrize("score", ["nll", "entropy", "margin"])
def test_ranking_fits_the_end_and_scores_stay_finite(score):
    logits, labels = _huge_model(58)
    other = np.random.default_rng(3).normal(size=(30, 3))
    with np.errstate(over="raise", invalid="raise"):
        res = rank_models(
            {"huge": logits, "other": other},
            score=score,
            from_logits=True,
            calibration_outputs={"huge": logits, "other": other},
            calibration_labels=labels,
            n_bootstrap=40,
            random_state=0,
        )
    assert res.temperatures["huge"] == 0.01
    assert np.all(np.isfinite(res.scores))
    assert np.all(np.isfinite(res.mean_confidence))


def test_a_confidently_wrong_huge_model_has_a_finite_nll_and_gets_the_upper_end():
    # every label at log-probability -1.8e308 when T = 0.01: the mean overflowed to inf and the
    # search compared inf - inf (RuntimeWarnings); now each term is divided before the sum
    logits = np.array([[1e307, -1e307], [-1e307, 1e307]] * 10)
    labels = np.array([1, 0] * 10)
    with np.errstate(over="raise", invalid="raise"):
        assert np.isfinite(temperature_nll(logits, labels, 0.01))
        assert fit_temperature(logits, labels) == 100.0

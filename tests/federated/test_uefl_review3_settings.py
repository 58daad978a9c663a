"""Review 3: non-finite settings of the public protocol functions and shifts are refused, and
FedAvg options that UEFL cannot honour are refused rather than ignored."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated.silos import make_silos
from trustlab.federated.uefl import UEFLConfig, select_uncertain, uncertainty_threshold


@pytest.mark.parametrize("factor", [math.nan, math.inf, -1.5])
def test_threshold_refuses_a_factor_that_is_not_a_finite_number_above_minus_one(factor):
    with pytest.raises(InputError, match="factor"):
        uncertainty_threshold([0.2, 0.4], factor)


@pytest.mark.parametrize("threshold", [math.nan, math.inf, -math.inf])
def test_select_uncertain_refuses_a_threshold_that_is_not_finite(threshold):
    # A NaN threshold flagged no silo at all, silently.
    with pytest.raises(InputError, match="threshold"):
        select_uncertain([0.2, 0.9], threshold)


def test_threshold_of_a_finite_factor_is_the_hand_computation():
    assert uncertainty_threshold([0.2, 0.4, 0.9], -0.5, "min") == pytest.approx(0.5 * 0.2)
    assert select_uncertain([0.2, 0.9], 0.2).tolist() == [False, True]


@pytest.mark.parametrize(
    "shift",
    [{"rotate": math.nan}, {"noise": math.nan}, {"blur": math.nan}, {"rotate": math.inf},
     {"blur": math.inf}, {"rotate": "x"}, {"rotate": None}, {"noise": True}],
)  # fmt: skip
def test_a_shift_amount_that_is_not_a_finite_number_is_refused_naming_the_silo(shift):
    # NaN rotation turned every image black; NaN noise made the features NaN.
    with pytest.raises(InputError, match=r"shifts\[1\]"):
        make_silos("digits", 2, [{}, shift])


def test_finite_shifts_are_still_applied():
    plain, turned = make_silos("digits", 2, [{}, {"rotate": 30.0, "noise": 0.1}])
    assert turned.shift == {"rotate": 30.0, "noise": 0.1}
    assert np.isfinite(turned.X_train).all()


@pytest.mark.parametrize("name", ["fraction_train", "fraction_evaluate"])
def test_the_strategy_refuses_a_fraction_it_would_ignore(name):
    pytest.importorskip("flwr")
    from trustlab.federated.flower import UEFLStrategy

    with pytest.raises(InputError, match=name):
        UEFLStrategy(UEFLConfig(), 3, **{name: 0.5})
    strategy = UEFLStrategy(UEFLConfig(), 3, **{name: 1.0})
    assert strategy.n_silos == 3

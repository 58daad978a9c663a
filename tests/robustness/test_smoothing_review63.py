"""Review 63 of cost-sensitive randomized smoothing: refusals left alone at review 60."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import (
    DatasetCertificate,
    SmoothedClassifier,
    certify_counts,
    certify_dataset,
)


def _two_points():
    return DatasetCertificate.from_counts(
        [0, 1], [[990, 10], [30, 970]], [0, 1], sigma=0.5, alpha=0.001
    )


@pytest.mark.parametrize("total", [10**18, 10**20])
def test_counts_beyond_2_53_samples_are_refused_not_an_infinite_radius(total):
    # 1e18 samples: the lower bound on p_A rounded to 1.0 and radius_std/radius came out inf
    # (the true radius is about 0.5 * 8.6); 1e20 overflowed int64.
    with pytest.raises(InputError, match=r"counts: expected rows of 1 to 2\*\*53 samples"):
        certify_counts([total, 0, 0], 0, 0, sigma=0.5, alpha=0.001)


def test_counts_up_to_2_53_samples_still_certify_finitely():
    cert = certify_counts([2**53, 0, 0], 0, 0, sigma=0.5, alpha=0.001)
    # closed form for k = n: p_lower = alpha ** (1 / n); Phi^-1 of it is finite
    assert np.isfinite(cert.radius_std) and np.isfinite(cert.radius)
    assert cert.radius_std > 3.9


@pytest.mark.parametrize("position", [2, 5, -3, 1.0, "0", True])
def test_certificate_position_is_checked(position):
    with pytest.raises(InputError, match="^position: expected an integer"):
        _two_points().certificate(position)


def test_certificate_position_negative_counts_from_the_end():
    result = _two_points()
    assert result.certificate(-1) == result.certificate(1)
    assert result.certificate(np.int64(0)) == result.certificate(0)


@pytest.mark.parametrize("num", [-3, 0, "a", 2.0])
def test_radius_grid_num_is_checked(num):
    with pytest.raises(InputError, match="^num: expected an integer >= 1"):
        _two_points().radius_grid(num)


def _never_called(X):
    raise AssertionError("sampled although n was refused")


@pytest.mark.parametrize("method", ["certify", "predict", "certify_dataset"])
def test_more_than_2_53_samples_are_refused_before_sampling(method):
    # n = 1e17 was accepted: the sampling would run for ages, then the bound on p_A rounds to 1
    smooth = SmoothedClassifier(_never_called, sigma=0.5, n_classes=2)
    x, n = np.array([1.0, 0.0]), 10**17
    calls = {
        "certify": lambda: smooth.certify(x, 1, n0=10, n=n, alpha=0.001),
        "predict": lambda: smooth.predict(x, n, 0.001),
        "certify_dataset": lambda: certify_dataset(smooth, x[None], [1], n0=10, n=n),
    }
    with pytest.raises(InputError, match=r"^n: expected an integer in \[1, 2\*\*53\]"):
        calls[method]()

"""Noise levels and costs near the float limits (review pass 54).

A sigma above float32's largest value (3.4e38) made every noisy input inf and was refused only
through the base model's NaN scores ('base_model output: ... NaN'); a sigma near 1e308 gave
radii that overflowed to inf (an infinite radius reads as 'no harmful target'). Rob_cost
(worst_cost) of costs near 1.8e308 overflowed to inf through the sum in the mean.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.robustness import DatasetCertificate, SmoothedClassifier, certify_counts


@pytest.mark.parametrize("sigma", [1e39, 1e37, 1e308])
def test_a_sigma_beyond_the_float32_noise_is_refused_naming_sigma(sigma):
    model = torch.nn.Linear(4, 3)
    with pytest.raises(InputError, match=r"^sigma: expected a noise level of at most 1e\+36"):
        SmoothedClassifier(model, sigma, 3)
    with pytest.raises(InputError, match="^sigma: "):
        certify_counts([0, 9990, 10, 0], 1, 1, sigma=sigma, alpha=0.001)


def test_the_largest_sigma_gives_finite_noise_and_radii():
    model = torch.nn.Linear(4, 3)
    smooth = SmoothedClassifier(model, 1e36, 3)
    counts = smooth.sample_counts(np.zeros((1, 4), dtype=np.float32), 50, random_state=0)
    assert counts.sum() == 50
    cert = certify_counts([0, 9990, 10, 0], 1, 1, sigma=1e36, alpha=0.001)
    assert np.isfinite(cert.radius_std) and np.isfinite(cert.radius_cs)


def test_worst_cost_of_costs_near_the_float64_limit_is_finite():
    costs = np.array([[0.0, 1.5e308], [1.5e308, 0.0]])
    result = DatasetCertificate.from_counts(
        [0, 1, 0],
        [[500, 500], [500, 500], [1000, 0]],
        [0, 1, 1],
        sigma=0.5,
        alpha=0.001,
        cost_matrix=costs,
    )
    worst = result.worst_cost([0.0])
    assert worst.tolist() == [pytest.approx(1.5e308)]

"""Review pass 53: the summary's radius column at a small sigma."""

import numpy as np
import pytest

from trustlab.robustness import DatasetCertificate

COUNTS = [[9990, 10], [9000, 1000]]


def _radius_column(result, radii=None):
    return [line.split()[0] for line in result.summary(radii).splitlines()[3:]]


@pytest.mark.parametrize("sigma", [0.001, 2e-5])
def test_small_sigma_radii_are_not_rounded_together(sigma):
    """At sigma 0.001 the radii 0, 0.0005, ..., 0.002 printed as 0.000, 0.001, 0.001, 0.002,
    0.002: two rows per label, Rob_std 1.0 and 0.5 under the same radius."""
    result = DatasetCertificate.from_counts([0, 0], COUNTS, [0, 0], sigma=sigma, alpha=0.001)
    shown = _radius_column(result)
    assert len(set(shown)) == 5
    grid = np.linspace(0.0, 2.0 * sigma, 5)
    assert np.allclose([float(s) for s in shown], grid, rtol=0.05, atol=0)


def test_the_usual_sigma_keeps_three_decimals():
    result = DatasetCertificate.from_counts([0, 0], COUNTS, [0, 0], sigma=0.25, alpha=0.001)
    assert _radius_column(result) == ["0.000", "0.125", "0.250", "0.375", "0.500"]
    assert _radius_column(result, [0, 1]) == ["0.000", "1.000"]

"""The paired design's power at large effects: scipy's nct.cdf far in the left tail is NaN for
some (df, nc), so sample_size(0.01, 0.99, design="paired") failed with 'The function value at
x=2.0 is NaN' (the CLI: 'unexpected failure', exit 1)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from statsmodels.stats.power import TTestPower

from cli_helpers import run_main
from trustlab.evaluation.statistics import achieved_power, sample_size


def _effect(p1, p2):
    psi = p1 * (1 - p2) + p2 * (1 - p1)
    return (p1 - p2) / math.sqrt(psi - (p1 - p2) ** 2)


def _power_by_integration(effect, n, alpha=0.05):
    """Two-sided paired-t power by quadrature over the chi-square of the t's denominator:
    T = (Z + nc) / sqrt(V / df), P(|T| > c) = E_V[P(Z > c s - nc) + P(Z < -c s - nc)]."""
    df, nc = n - 1, abs(effect) * math.sqrt(n)
    crit = stats.t.isf(alpha / 2, df)

    def tails(v):
        s = math.sqrt(v / df)
        return (stats.norm.sf(crit * s - nc) + stats.norm.cdf(-crit * s - nc)) * stats.chi2.pdf(
            v, df
        )

    value, error = integrate.quad(tails, 0, np.inf, epsabs=1e-13, epsrel=1e-11, limit=200)
    assert error < 1e-9
    return value


@pytest.mark.parametrize(("p1", "p2"), [(0.01, 0.99), (0.02, 0.97), (0.99, 0.01), (0.05, 0.9)])
@pytest.mark.parametrize("n", [2, 3, 5, 40])
def test_paired_power_at_large_effects_equals_an_integration_and_statsmodels(p1, p2, n):
    ours = achieved_power(p1, p2, n, design="paired")
    assert math.isfinite(ours)
    assert ours == pytest.approx(_power_by_integration(_effect(p1, p2), n), abs=1e-8)
    theirs = TTestPower().power(abs(_effect(p1, p2)), n, 0.05, alternative="two-sided")
    if math.isfinite(theirs):  # statsmodels goes through the same NaN-prone nct.cdf
        assert ours == pytest.approx(theirs, abs=1e-9)


def test_paired_sample_size_at_a_large_effect_is_the_smallest_n_with_the_power():
    result = sample_size(0.01, 0.99, design="paired")
    powers = [achieved_power(0.01, 0.99, n, design="paired") for n in (2, 3)]
    assert result.n_required == 2 + int(powers[0] < 0.8)
    assert np.isfinite(result.n)


def test_the_cli_answers_the_extreme_paired_design(capsys, tmp_path):
    code, out, err = run_main(
        ["safety", "context", "power", "--p1", "0.01", "--p2", "0.99", "--design", "paired",
         "--out", str(tmp_path / "p")],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "pairs" in out

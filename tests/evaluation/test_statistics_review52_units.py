"""SampleSize says what its n counts: pairs (paired), observations (one-sample), per group, or the
p1 group's size with the p2 group's beside it when the groups differ in size."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from trustlab.evaluation.statistics import sample_size


@pytest.mark.parametrize(
    ("design", "unit"),
    [("paired", "pairs"), ("one-sample", "observations"), ("independent", "per group")],
)
def test_summary_and_plot_name_what_n_counts(design, unit):
    # `trustlab safety context power --design paired` printed "-> 5 per group" for 5 pairs
    result = sample_size(0.9, 0.1, design=design)
    assert result.summary().endswith(
        f"-> {result.n_required} {unit} (power {result.power_at_n_required:.4f})"
    )
    assert "per group" not in result.summary() or design == "independent"
    label = result.plot().get_xlabel()
    assert label == ("n per group" if design == "independent" else f"n ({unit})")


def test_unequal_groups_give_both_sizes_as_statsmodels_counts_them():
    result = sample_size(0.6, 0.4, design="independent", ratio=2.0)
    nobs1 = NormalIndPower().solve_power(
        proportion_effectsize(0.6, 0.4), alpha=0.05, power=0.8, ratio=2.0
    )
    assert result.n_required == math.ceil(nobs1)
    other = math.ceil(2.0 * result.n_required)
    assert f"-> {result.n_required} in the p1 group ({other} in the p2 group, ratio 2)" in (
        result.summary()
    )
    # and the power at those two sizes is what statsmodels computes for them
    power = NormalIndPower().power(
        proportion_effectsize(0.6, 0.4), nobs1=result.n_required, alpha=0.05, ratio=2.0
    )
    assert result.power_at_n_required == pytest.approx(power, abs=1e-12)

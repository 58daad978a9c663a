"""SampleSize.plot draws the power curve of the design solved, discordant share included
(review 59): a paired design with discordant=0.25 was plotted with the default share, 0.465 at
n_required = 44 where the result says 0.808."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from trustlab.evaluation import achieved_power, sample_size


@pytest.mark.parametrize("discordant", [0.25, None])
def test_paired_plot_is_the_power_curve_of_the_share_solved_for(discordant):
    result = sample_size(0.6, 0.4, design="paired", discordant=discordant)
    assert result.discordant == discordant
    x, y = result.plot().lines[0].get_data()
    expected = [achieved_power(0.6, 0.4, int(k), design="paired", discordant=discordant) for k in x]
    # the same closed form at the same n: equal to rounding
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-12)


def test_the_curve_passes_the_target_power_near_n_required():
    result = sample_size(0.6, 0.4, design="paired", discordant=0.25)  # 44 pairs, power 0.808
    x, y = result.plot().lines[0].get_data()
    below, above = x[y < 0.8].max(), x[y >= 0.8].min()
    assert below < result.n_required <= above

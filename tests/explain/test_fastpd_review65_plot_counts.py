"""plot_shap_summary checks max_display and output (review 65).

max_display=0 stopped on a raw UnboundLocalError, -1 silently dropped the least important
feature, 2.5 a raw TypeError; output='a' a raw ValueError and 1.7 was cut to 1.
"""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from trustlab.errors import InputError
from trustlab.explain.fastpd import plot_shap_summary

PHI = np.arange(60, dtype=float).reshape(20, 3) / 60.0
ROWS = np.arange(60, dtype=float).reshape(20, 3)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_max_display_must_be_a_positive_int(bad):
    with pytest.raises(InputError, match="max_display: expected an integer >= 1"):
        plot_shap_summary(PHI, ROWS, ax=Figure().add_subplot(), max_display=bad)


@pytest.mark.parametrize("bad", ["a", 1.7, True])
def test_output_must_be_an_index(bad):
    phi = np.stack([PHI, -PHI, 2 * PHI], axis=2)
    with pytest.raises(InputError, match="output: expected an index below 3"):
        plot_shap_summary(phi, ROWS, ax=Figure().add_subplot(), output=bad)


def test_good_counts_still_draw():
    ax = plot_shap_summary(PHI, ROWS, ax=Figure().add_subplot(), max_display=2)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x1", "x2"]
    ax = plot_shap_summary(PHI, ROWS, ax=Figure().add_subplot(), max_display=None)
    assert len(ax.get_yticklabels()) == 3
    phi = np.stack([PHI, -PHI, 2 * PHI], axis=2)
    ax = plot_shap_summary(phi, ROWS, ax=Figure().add_subplot(), output=np.int64(2))
    assert ax.get_xlabel() == "SHAP value (output 2)"

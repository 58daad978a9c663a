"""A temperature fitted at an end of the search (0.01 or 100) is the search's, not the slice's.

On a labelled slice whose items a model predicts all right, the NLL falls as the temperature
falls, down to the end of the search: the model's tempered outputs became near-certain and the
result said nothing (only, at times, that the model "reports probability 1 on many items",
which the fit had caused). On a slice it predicts all wrong, the temperature goes to the other end
and its outputs to uniform. Either way the result now says so in a note.
"""

import numpy as np
import pytest

from trustlab.evaluation import rank_models


def test_a_temperature_at_an_end_of_the_search_is_noted():
    slice_labels = np.array([0, 1, 0, 1, 0, 1])
    right = np.where(slice_labels[:, None] == np.arange(2), 0.7, 0.3)  # every item right
    wrong = 1.0 - right  # every item wrong
    mixed = right.copy()
    mixed[:2] = wrong[:2]  # 4 right, 2 wrong: an interior optimum (T = 1.22)
    ranked = np.array([[0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.9, 0.1]])
    result = rank_models(
        {"right": ranked, "wrong": ranked[::-1].copy(), "mixed": ranked[:, ::-1].copy()},
        calibration_outputs={"right": right, "wrong": wrong, "mixed": mixed},
        calibration_labels=slice_labels,
        n_bootstrap=0,
    )
    assert result.temperatures["right"] == pytest.approx(0.01, rel=1e-4)
    assert result.temperatures["wrong"] == pytest.approx(100.0, rel=1e-4)
    assert result.temperatures["mixed"] == pytest.approx(np.log(7 / 3) / np.log(2), rel=1e-4)
    low = [note for note in result.notes if "lower end of the search (0.01)" in note]
    high = [note for note in result.notes if "upper end of the search (100)" in note]
    assert len(low) == len(high) == 1
    assert low[0].startswith("the temperature fitted for right is the lower end")
    assert high[0].startswith("the temperature fitted for wrong is the upper end")
    assert "mixed" not in low[0] + high[0]


def test_temperatures_inside_the_search_add_no_note():
    slice_labels = np.array([0, 1, 0, 1, 0, 1])
    right = np.where(slice_labels[:, None] == np.arange(2), 0.7, 0.3)
    mixed = right.copy()
    mixed[:2] = 1.0 - right[:2]  # 4 right, 2 wrong: T = log(7/3) / log(2)
    one_wrong = right.copy()
    one_wrong[0] = 1.0 - right[0]  # 5 right, 1 wrong: T = log(7/3) / log(5)
    ranked = np.array([[0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.9, 0.1]])
    result = rank_models(
        {"a": ranked, "b": ranked[::-1].copy()},
        calibration_outputs={"a": mixed, "b": one_wrong},
        calibration_labels=slice_labels,
        n_bootstrap=0,
    )
    assert result.temperatures["a"] == pytest.approx(np.log(7 / 3) / np.log(2), rel=1e-4)
    assert result.temperatures["b"] == pytest.approx(np.log(7 / 3) / np.log(5), rel=1e-4)
    assert not any("end of the search" in note for note in result.notes)

"""calibration_gap's sign, the pair note's subtraction of the disagreement and the input order of
tied models in predicted_ranking are pinned (review 59): flipping the gap to accuracy minus
confidence, halving the disagreement in the excess, or listing tied models in reverse input
order each left all 173 ranking/evaluate tests passing."""

import numpy as np
import pytest

from trustlab.evaluation import rank_models


def test_calibration_gap_is_mean_confidence_minus_accuracy():
    outputs = {"a": np.array([[0.9, 0.1]] * 10), "b": np.array([[0.6, 0.4]] * 10)}
    labels = np.array([0] * 7 + [1] * 3)  # both predict class 0: accuracy 0.7
    result = rank_models(outputs, labels=labels, n_bootstrap=0)
    np.testing.assert_allclose(result.calibration_gap, [0.2, -0.1], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("confidence", "noted"), [(0.65, True), (0.72, False)])
def test_pair_note_subtracts_the_whole_disagreement(confidence, noted):
    # 400 items: slack 0.1. b disagrees with a on 40 items (0.1): gap 0.25 -> excess 0.15 (noted),
    # gap 0.18 -> excess 0.08 (not noted)
    n, flipped = 400, 40
    a = np.array([[0.9, 0.1]] * n)
    b = np.array(
        [[confidence, 1 - confidence]] * (n - flipped) + [[1 - confidence, confidence]] * flipped
    )
    result = rank_models({"a": a, "b": b}, n_bootstrap=0)
    assert any("model pair(s) differ in mean confidence" in t for t in result.notes) is noted


def test_tied_models_keep_their_input_order_in_the_predicted_ranking():
    same = np.array([[0.8, 0.2], [0.3, 0.7]])
    outputs = {"z": same, "low": np.array([[0.6, 0.4], [0.5, 0.5]]), "a": same.copy()}
    result = rank_models(outputs, n_bootstrap=0)
    assert result.ranks.tolist() == [1, 3, 1]
    assert result.predicted_ranking == ("z", "a", "low")


@pytest.mark.parametrize(
    ("temperature", "noted"), [(0.0100009, True), (0.0101, False), (99.995, True), (99.5, False)]
)
def test_only_temperatures_within_1e4_of_an_end_are_said_to_reach_it(temperature, noted):
    # BOUND_TOLERANCE 1e-4 (relative): the bounded search stops within about 1e-7 of an end.
    # 0.0100009 and 99.995 lie 9e-5 and 5e-5 (relative) inside, not on the bound itself
    # (0.010001 == 1e-2 * (1 + 1e-4) exactly in binary: a rewrite of the comparison would flip it)
    from trustlab.evaluation._caveat import _temperature_bound_notes

    assert bool(_temperature_bound_notes({"m": temperature})) is noted

"""The documented thresholds of the ranking caveat and the renormalisation are pinned (review 59).

Each test here fails when its constant or formula is changed: before, CERTAIN_SHARE 0.10 -> 0.30,
pair_slack's 2 / sqrt(n) -> 1 / sqrt(n), the tie credit 1 / (1 + c) of consensus_agreement ->
1 / 2, and dropping the renormalisation of probability rows all left every ranking test passing.
"""

import itertools

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import item_scores, rank_models

SOFT = [0.6, 0.4]


def _certain_on(k: int, n: int = 20) -> np.ndarray:
    """A 2-class model reporting probability 1 on k of n items, 0.7 elsewhere."""
    return np.array([[1.0, 0.0]] * k + [[0.7, 0.3]] * (n - k))


@pytest.mark.parametrize(("k", "warned"), [(2, True), (1, False)])
def test_certain_model_warning_starts_at_ten_percent_of_the_items(k, warned):
    # docs/evaluation-ranking.md: "a model reports probability 1 on 10 % of the items or more"
    result = rank_models({"hard": _certain_on(k), "soft": np.array([SOFT] * 20)}, n_bootstrap=0)
    said = any("probability 1 on many items: hard (" in w for w in result.warnings)
    assert said is warned
    assert result.fraction_certain[0] == pytest.approx(k / 20, abs=1e-15)


@pytest.mark.parametrize(("second", "noted"), [(0.69, True), (0.71, False)])
def test_pair_note_needs_a_gap_beyond_two_over_root_n(second, noted):
    # 400 items: slack max(0.05, 2 / sqrt(400)) = 0.1; both models predict class 0 everywhere
    # (disagreement 0), so the excess is the gap in mean confidence: 0.11 or 0.09
    n = 400
    outputs = {"a": np.array([[0.8, 0.2]] * n), "b": np.array([[second, 1 - second]] * n)}
    result = rank_models(outputs, n_bootstrap=0)
    assert any("model pair(s) differ in mean confidence" in t for t in result.notes) is noted


def _brute_force_agreement(predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Credit 1 / (number of classes tied at the top of the other models' vote) when the model's
    class is among them, else 0; averaged over items."""
    n_models, n = predictions.shape
    out = np.zeros(n_models)
    for m, i in itertools.product(range(n_models), range(n)):
        votes = np.bincount(np.delete(predictions[:, i], m), minlength=n_classes)
        top = np.flatnonzero(votes == votes.max())
        out[m] += (predictions[m, i] in top) / len(top)
    return out / n


def test_consensus_agreement_shares_tied_votes_as_a_brute_force_count_does():
    rng = np.random.default_rng(59)
    n, n_classes, n_models = 40, 3, 4  # 3 others, 3 classes: 1-1-1 and 2-1 votes
    predictions = rng.integers(0, n_classes, size=(n_models, n))
    outputs = {}
    for m in range(n_models):
        top = 0.8 - 0.01 * m
        probs = np.full((n, n_classes), (1 - top) / (n_classes - 1))
        probs[np.arange(n), predictions[m]] = top
        outputs[f"m{m}"] = probs
    result = rank_models(outputs, n_bootstrap=0)
    expected = _brute_force_agreement(predictions, n_classes)
    # sums of at most 40 terms 1 or 1/3, divided by 40: equal to well below 1e-12
    np.testing.assert_allclose(result.consensus_agreement, expected, rtol=0, atol=1e-12)


def test_probability_rows_off_by_rounding_are_renormalised():
    # a row summing to 1.00008 (within the 1e-4 tolerance) is divided by its sum
    rows = np.array([[0.7, 0.30008], [0.5, 0.5]])
    assert item_scores(rows, "max_prob")[0] == pytest.approx(0.7 / 1.00008, rel=1e-12)
    assert item_scores(rows, "nll")[0] == pytest.approx(-np.log(0.7 / 1.00008), rel=1e-12)


@pytest.mark.parametrize(("second", "noted"), [(0.79, True), (0.81, False)])
def test_gap_spread_note_starts_beyond_a_tenth(second, noted):
    # docs: "the spread of mean confidence minus accuracy" is reported above 0.1 (GAP_SPREAD);
    # both models right on all 100 items, mean confidence 0.9 and 0.79 / 0.81: spread 0.11 / 0.09
    n = 100
    outputs = {"a": np.array([[0.9, 0.1]] * n), "b": np.array([[second, 1 - second]] * n)}
    result = rank_models(outputs, labels=np.zeros(n, dtype=int), n_bootstrap=0)
    assert any("mean confidence minus accuracy ranges" in t for t in result.notes) is noted


def test_probability_rows_off_by_more_than_1e4_are_refused():
    # docs: "rows must sum to 1 within 1e-4"; 1.0002 is beyond it (1.00008 above is within)
    with pytest.raises(InputError, match=r"^output\[0\]: expected a probability distribution"):
        item_scores(np.array([[0.7, 0.3002], [0.5, 0.5]]), "nll")

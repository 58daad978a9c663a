"""Label-free model ranking: scores, correlations, bootstrap, calibration, result and bad input.

Oracles: scipy.stats.entropy / spearmanr / kendalltau, the direct formulas, lm-polygraph's
Perplexity and MaximumSequenceProbability definitions (-mean and -sum of token log-likelihoods,
written out here: the package pulls in torch), naive per-resample indexing, the normal
approximation of the bootstrap, a brute-force temperature grid and brute-force majority votes.
"""

import doctest
import json
import math
import re
from collections import Counter
from pathlib import Path

import hypothesis.extra.numpy as hnp
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from trustlab.errors import InputError
from trustlab.evaluation import (
    SCORES,
    TokenLogProbs,
    _bootstrap,
    _calibration,
    item_scores,
    rank_models,
    ranking,
    scores,
)
from trustlab.evaluation._correlation import kendall_rows, spearman_rows

SETTINGS = settings(max_examples=40, deadline=None)
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "evaluation-ranking.md"


def softmax_rows(logits):
    return special.softmax(logits, axis=1)


def zoo(n=300, n_models=4, n_classes=3, seed=0):
    """Models of growing skill on the same items, and the true labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    outputs = {}
    for m in range(n_models):
        logits = rng.normal(size=(n, n_classes))
        logits[np.arange(n), labels] += 0.6 * m
        outputs[f"m{m}"] = softmax_rows(logits)
    return outputs, labels


probability_rows = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 12), st.integers(2, 6)),
    elements=st.floats(0.0, 1.0),
).filter(lambda a: (a.sum(axis=1) > 1e-3).all())


# --- per-item scores -------------------------------------------------------------------------


@SETTINGS
@given(probability_rows)
def test_entropy_equals_scipy_entropy(raw):
    probs = raw / raw.sum(axis=1, keepdims=True)
    expected = stats.entropy(probs, axis=1)
    np.testing.assert_allclose(item_scores(probs, "entropy"), expected, rtol=0, atol=1e-12)


@SETTINGS
@given(probability_rows)
def test_nll_max_prob_and_margin_equal_the_direct_formulas(raw):
    probs = raw / raw.sum(axis=1, keepdims=True)
    ordered = np.sort(probs, axis=1)
    np.testing.assert_allclose(item_scores(probs, "nll"), -np.log(probs.max(axis=1)), atol=1e-12)
    np.testing.assert_allclose(item_scores(probs, "max_prob"), probs.max(axis=1), atol=1e-12)
    np.testing.assert_allclose(
        item_scores(probs, "margin"), ordered[:, -1] - ordered[:, -2], atol=1e-12
    )


@SETTINGS
@given(hnp.arrays(np.float64, (7, 4), elements=st.floats(-30, 30)))
def test_logit_scores_equal_the_scores_of_their_softmax(logits):
    probs = softmax_rows(logits)
    for score in SCORES:
        np.testing.assert_allclose(
            item_scores(logits, score, from_logits=True),
            item_scores(probs, score),
            rtol=1e-9,
            atol=1e-12,
        )
    expected = stats.entropy(probs, axis=1)
    np.testing.assert_allclose(
        item_scores(logits, "entropy", from_logits=True), expected, atol=1e-12
    )


@SETTINGS
@given(
    hnp.arrays(np.float64, (6, 3), elements=st.floats(-20, 20)),
    hnp.arrays(np.float64, (6, 1), elements=st.floats(-50, 50)),
)
def test_logit_scores_ignore_a_constant_added_to_a_row(logits, shift):
    for score in SCORES:
        np.testing.assert_allclose(
            item_scores(logits + shift, score, from_logits=True),
            item_scores(logits, score, from_logits=True),
            atol=1e-9,
        )


def ragged_log_likelihoods(seed=0, n=25):
    rng = np.random.default_rng(seed)
    return [np.log(rng.uniform(0.05, 1.0, size=rng.integers(1, 9))) for _ in range(n)]


def test_token_nll_equals_lm_polygraph_perplexity_and_sequence_probability():
    sequences = ragged_log_likelihoods()
    tokens = TokenLogProbs(sequences)
    perplexity = np.array([-np.mean(ll) for ll in sequences])  # lm-polygraph Perplexity
    max_sequence_prob = np.array([-np.sum(ll) for ll in sequences])  # MaximumSequenceProbability
    mean_nll = item_scores(tokens, "nll", token_position="mean")
    np.testing.assert_allclose(mean_nll, perplexity, rtol=0, atol=1e-12)
    sum_nll = item_scores(tokens, "nll", token_position="sum")
    np.testing.assert_allclose(sum_nll, max_sequence_prob, rtol=0, atol=1e-12)


def test_token_first_and_key_positions_pick_those_tokens():
    sequences = ragged_log_likelihoods(seed=1)
    keys = [len(s) - 1 for s in sequences]
    tokens = TokenLogProbs(sequences, key_positions=keys)
    first = item_scores(tokens, "nll", token_position="first")
    key = item_scores(tokens, "nll", token_position="key")
    np.testing.assert_array_equal(first, [-s[0] for s in sequences])
    np.testing.assert_array_equal(key, [-s[k] for s, k in zip(sequences, keys, strict=True)])
    probability = item_scores(tokens, "max_prob", token_position="first")
    np.testing.assert_allclose(probability, [math.exp(s[0]) for s in sequences], atol=1e-15)


# --- rank correlations -----------------------------------------------------------------------

tied_rows = st.integers(3, 9).flatmap(
    lambda m: st.tuples(
        hnp.arrays(np.float64, (4, m), elements=st.integers(0, 3).map(float)),
        hnp.arrays(np.float64, (4, m), elements=st.integers(0, 4).map(float)),
    )
)


@SETTINGS
@given(tied_rows)
def test_row_spearman_equals_scipy_spearmanr(pair):
    x, y = pair
    ours = spearman_rows(x, y)
    for b in range(len(x)):
        if np.ptp(x[b]) == 0 or np.ptp(y[b]) == 0:
            assert np.isnan(ours[b])
        else:
            assert abs(ours[b] - stats.spearmanr(x[b], y[b]).statistic) <= 1e-12


@SETTINGS
@given(tied_rows)
def test_row_kendall_equals_scipy_kendalltau_b(pair):
    x, y = pair
    ours = kendall_rows(x, y)
    for b in range(len(x)):
        if np.ptp(x[b]) == 0 or np.ptp(y[b]) == 0:
            assert np.isnan(ours[b])
        else:
            assert abs(ours[b] - stats.kendalltau(x[b], y[b]).statistic) <= 1e-12


def test_result_correlations_equal_scipy_on_the_model_scores():
    outputs, labels = zoo(n_models=6)
    result = rank_models(outputs, labels=labels, n_bootstrap=0)
    accuracy = [np.mean(p.argmax(axis=1) == labels) for p in outputs.values()]
    np.testing.assert_allclose(result.accuracy, accuracy, atol=1e-15)
    confidence = -result.scores  # nll: lower is more confident
    assert abs(result.spearman - stats.spearmanr(confidence, accuracy).statistic) <= 1e-12
    assert abs(result.kendall - stats.kendalltau(confidence, accuracy).statistic) <= 1e-12


# --- bootstrap -------------------------------------------------------------------------------


def test_count_resampling_equals_index_resampling():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(500, 7))
    indices = rng.integers(0, 500, size=(11, 500))
    naive = np.stack([values[idx].mean(axis=0) for idx in indices])
    np.testing.assert_allclose(_bootstrap.resampled_means(values, indices), naive, atol=1e-12)


def test_bootstrap_equals_a_naive_loop_over_the_same_resamples(monkeypatch):
    monkeypatch.setattr(_bootstrap, "CHUNK_ELEMENTS", 1000)  # several chunks, one partial
    rng = np.random.default_rng(4)
    values = rng.normal(size=(300, 3))
    correct = (rng.random((300, 2)) < 0.7).astype(np.float32)  # the exact float32 path
    ours, ours_correct = _bootstrap.bootstrap_means([values, correct], 17, np.random.default_rng(5))
    chunks = list(_bootstrap.bootstrap_index_chunks(300, 17, np.random.default_rng(5)))
    naive = np.vstack([[values[idx].mean(axis=0) for idx in chunk] for chunk in chunks])
    assert ours.shape == (17, 3) and len(chunks) == 6
    np.testing.assert_allclose(ours, naive, atol=1e-12)
    hits = np.vstack([[correct[idx].astype(int).sum(axis=0) for idx in chunk] for chunk in chunks])
    np.testing.assert_array_equal(ours_correct, hits / 300)


def test_intervals_match_the_normal_approximation_on_many_items():
    outputs, labels = zoo(n=20_000, n_models=2, seed=5)
    result = rank_models(outputs, labels=labels, n_bootstrap=2000, random_state=0)
    z = stats.norm.ppf(0.975)
    for m, probs in enumerate(outputs.values()):
        nll = -np.log(probs.max(axis=1))
        half = z * nll.std() / np.sqrt(len(nll))
        np.testing.assert_allclose(
            result.score_intervals[m], nll.mean() + [-half, half], atol=0.1 * half
        )
        acc = result.accuracy[m]
        half = z * np.sqrt(acc * (1 - acc) / len(labels))
        np.testing.assert_allclose(
            result.accuracy_intervals[m], acc + np.array([-half, half]), atol=0.1 * half
        )


def test_the_same_seed_gives_the_same_result_and_another_seed_other_intervals():
    outputs, labels = zoo()
    first = rank_models(outputs, labels=labels, n_bootstrap=200, random_state=7)
    again = rank_models(outputs, labels=labels, n_bootstrap=200, random_state=7)
    other = rank_models(outputs, labels=labels, n_bootstrap=200, random_state=8)
    assert first.to_dict() == again.to_dict()
    assert not np.array_equal(first.score_intervals, other.score_intervals)


def test_no_bootstrap_gives_point_estimates_without_intervals():
    outputs, labels = zoo()
    result = rank_models(outputs, labels=labels, n_bootstrap=0)
    assert result.score_intervals is None and result.rank_intervals is None
    assert result.spearman_interval is None and result.accuracy_intervals is None
    full = rank_models(outputs, labels=labels, n_bootstrap=50, random_state=0)
    np.testing.assert_array_equal(result.scores, full.scores)
    assert result.spearman == full.spearman


def test_identical_models_share_a_rank_in_every_resample():
    outputs, _ = zoo(n_models=3)
    outputs["copy"] = outputs["m2"].copy()
    result = rank_models(outputs, n_bootstrap=100, random_state=0)
    best = result.models.index("m2"), result.models.index("copy")
    assert [result.ranks[m] for m in best] == [1, 1]
    assert [tuple(result.rank_intervals[m]) for m in best] == [(1, 1), (1, 1)]


# --- ranking ---------------------------------------------------------------------------------


@pytest.mark.parametrize("score", SCORES)
def test_predicted_ranking_puts_the_most_confident_model_first(score):
    sharp = softmax_rows(np.random.default_rng(0).normal(size=(200, 4)) * 4)
    vague = softmax_rows(np.random.default_rng(1).normal(size=(200, 4)) * 0.5)
    result = rank_models({"vague": vague, "sharp": sharp}, score=score, n_bootstrap=0)
    assert result.predicted_ranking == ("sharp", "vague")
    assert result.lower_is_confident == (score in ("nll", "entropy"))


def test_reordering_the_models_reorders_the_results():
    outputs, labels = zoo(n_models=5)
    reordered = dict(reversed(list(outputs.items())))
    a = rank_models(outputs, labels=labels, n_bootstrap=0)
    b = rank_models(reordered, labels=labels, n_bootstrap=0)
    assert a.predicted_ranking == b.predicted_ranking and a.true_ranking == b.true_ranking
    np.testing.assert_array_equal(a.scores, b.scores[::-1])
    assert (a.spearman, a.kendall) == (b.spearman, b.kendall)


def test_shuffling_the_items_leaves_the_point_estimates_unchanged():
    outputs, labels = zoo()
    order = np.random.default_rng(0).permutation(len(labels))
    a = rank_models(outputs, labels=labels, n_bootstrap=0)
    b = rank_models({k: v[order] for k, v in outputs.items()}, labels=labels[order], n_bootstrap=0)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-12)
    np.testing.assert_array_equal(a.accuracy, b.accuracy)


def test_class_names_map_labels_like_column_indices():
    outputs, labels = zoo()
    names = np.array(["cat", "dog", "eel"])
    by_index = rank_models(outputs, labels=labels, n_bootstrap=0)
    by_name = rank_models(outputs, labels=names[labels], classes=names, n_bootstrap=0)
    np.testing.assert_array_equal(by_index.accuracy, by_name.accuracy)


def test_correctness_mapping_gives_the_same_evaluation_as_labels():
    outputs, labels = zoo()
    correct = {k: v.argmax(axis=1) == labels for k, v in outputs.items()}
    a = rank_models(outputs, labels=labels, n_bootstrap=100, random_state=1)
    b = rank_models(outputs, correct=correct, n_bootstrap=100, random_state=1)
    assert a.to_dict()["spearman"] == b.to_dict()["spearman"]
    np.testing.assert_array_equal(a.accuracy_intervals, b.accuracy_intervals)


def test_generative_models_rank_by_token_nll_and_evaluate_with_correctness():
    rng = np.random.default_rng(2)
    outputs, correct = {}, {}
    for m, skill in enumerate([0.3, 0.6, 0.9]):
        right = rng.random(200) < skill
        # a right answer is emitted with higher probability, as by a calibrated model
        logp = [np.log(rng.uniform(0.5, 1.0, 3) if r else rng.uniform(0.05, 0.6, 3)) for r in right]
        outputs[f"llm{m}"], correct[f"llm{m}"] = TokenLogProbs(logp), right
    result = rank_models(outputs, correct=correct, n_bootstrap=100, random_state=0)
    assert result.predicted_ranking == ("llm2", "llm1", "llm0")
    assert result.spearman == 1.0 and result.token_position == "mean"
    assert np.isnan(result.mean_confidence).all() and result.consensus_spearman is None
    # no confidence-accuracy gap to show: "n/a", not "+nan"
    assert "nan" not in result.summary() and result.summary().count(" n/a") == 3


def test_result_dict_is_json_safe_and_summary_and_plot_work():
    outputs, labels = zoo()
    for result in (
        rank_models(outputs, labels=labels, n_bootstrap=50, random_state=0),
        rank_models(outputs, n_bootstrap=0),
    ):
        text = json.dumps(result.to_dict(), allow_nan=False)
        assert all(name in text for name in outputs)
        assert all(name in result.summary() for name in outputs)
        ax = result.plot()
        assert len(ax.lines) + len(ax.collections) > 0
        plt.close(ax.figure)
    assert "Spearman rho" in rank_models(outputs, labels=labels, n_bootstrap=0).summary()


def test_a_calibration_slice_missing_a_model_says_which_models_it_needs():
    # With one model's slice, it said "expected at least 2 models to rank, got '1 model(s)'".
    outputs, labels = zoo(n_models=2)
    with pytest.raises(InputError, match=r"^calibration_outputs: .*each of the models") as caught:
        rank_models(
            outputs,
            calibration_outputs={"m0": outputs["m0"][:20]},
            calibration_labels=labels[:20],
        )
    assert "at least 2 models" not in str(caught.value) and "['m0']" in str(caught.value)


def test_summary_keeps_long_model_names_apart_and_aligned():
    # Names sharing their first 24 characters were cut to the same 24 characters.
    outputs, labels = zoo(n_models=2)
    long_names = ["logistic_regression_C0.01_seed1", "logistic_regression_C0.01_seed2"]
    renamed = dict(zip(long_names, outputs.values(), strict=True))
    for n_bootstrap in (0, 20):
        result = rank_models(renamed, labels=labels, n_bootstrap=n_bootstrap, random_state=0)
        lines = result.summary().splitlines()
        rows = [line for line in lines if line.split()[0].isdigit()]  # the table's rows
        assert len(rows) == 2
        assert all(any(name in row for row in rows) for name in long_names)
        header = next(line for line in lines if line.lstrip().startswith("rank"))
        score_end = header.index("score") + len("score")
        assert all(row[score_end - 1] != " " and row[score_end] == " " for row in rows)
        # no stray space before the comma when there are no intervals
        spearman = next(line for line in lines if line.startswith("Spearman"))
        assert " ," not in spearman and spearman == spearman.rstrip()


# --- temperature scaling ---------------------------------------------------------------------


def overconfident_sample(n, temperature, seed=0, n_classes=5):
    """Labels drawn from softmax(z); the model reports z * temperature (too sharp if > 1)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, n_classes)) * 1.5
    cumulative = softmax_rows(logits).cumsum(axis=1)
    labels = (rng.random((n, 1)) > cumulative).sum(axis=1)
    return logits * temperature, labels


def grid_nll(logits, labels, temperatures):
    """NLL at every temperature of a grid at once, with scipy's log_softmax."""
    scaled = logits[None, :, :] / temperatures[:, None, None]
    log_p = special.log_softmax(scaled, axis=2)
    return -log_p[:, np.arange(len(labels)), labels].mean(axis=1)


def test_fitted_temperature_is_the_minimum_of_a_brute_force_grid():
    logits, labels = overconfident_sample(400, 2.5, seed=1)
    fitted = _calibration.fit_temperature(logits, labels)
    coarse = np.exp(np.linspace(np.log(0.05), np.log(20.0), 601))
    best = np.log(coarse[np.argmin(grid_nll(logits, labels, coarse))])
    step = np.log(coarse[1] / coarse[0])
    fine = np.exp(np.linspace(best - step, best + step, 2001))  # resolution 1e-5 in log T
    nll = grid_nll(logits, labels, fine)
    assert abs(np.log(fitted) - np.log(fine[np.argmin(nll)])) <= 2 * step / 2000
    assert _calibration.temperature_nll(logits, labels, fitted) <= nll.min() + 1e-12


def test_temperature_scaling_recovers_a_known_overconfidence():
    logits, labels = overconfident_sample(20_000, 3.0, seed=2)
    assert abs(_calibration.fit_temperature(logits, labels) - 3.0) < 0.15


def test_temperature_scaling_keeps_accuracy_and_fixes_mean_confidence():
    logits, labels = overconfident_sample(6000, 3.0, seed=3)
    sharp = {"sharp": logits, "calibrated": logits / 3.0}
    plain = rank_models(sharp, from_logits=True, labels=labels, n_bootstrap=0)
    scaled = rank_models(
        sharp, from_logits=True, labels=labels, calibration_size=2000, n_bootstrap=0, random_state=0
    )
    assert plain.mean_confidence[0] - plain.accuracy[0] > 0.15  # too sharp before
    np.testing.assert_allclose(scaled.calibration_gap, 0.0, atol=0.03)
    assert abs(scaled.temperatures["sharp"] / scaled.temperatures["calibrated"] - 3.0) < 0.3


def test_a_random_calibration_slice_equals_giving_that_slice_explicitly():
    outputs, labels = zoo(n=300)
    n, size = len(labels), 60
    fit_rows = np.random.default_rng(11).choice(n, size=size, replace=False)
    keep = np.setdiff1d(np.arange(n), fit_rows)
    drawn = rank_models(
        outputs, labels=labels, calibration_size=size, n_bootstrap=0, random_state=11
    )
    given_slice = rank_models(
        {k: v[keep] for k, v in outputs.items()},
        labels=labels[keep],
        calibration_outputs={k: v[fit_rows] for k, v in outputs.items()},
        calibration_labels=labels[fit_rows],
        n_bootstrap=0,
    )
    assert drawn.temperatures == given_slice.temperatures
    np.testing.assert_allclose(drawn.scores, given_slice.scores, atol=1e-12)
    assert drawn.n_items == n - size


# --- the calibration caveat ------------------------------------------------------------------


def test_models_reporting_probability_one_are_warned_about():
    outputs, labels = zoo()
    outputs["hard"] = np.eye(3)[outputs["m3"].argmax(axis=1)]
    result = rank_models(outputs, n_bootstrap=0)
    assert result.fraction_certain[-1] == 1.0
    assert any("probability 1" in w and "hard (100%)" in w for w in result.warnings)


def test_consensus_agreement_equals_brute_force_majority_votes():
    rng = np.random.default_rng(0)
    predictions = rng.integers(0, 3, size=(5, 400))
    expected = []
    for m in range(5):
        credit = 0.0
        for i in range(400):
            votes = Counter(predictions[np.arange(5) != m, i].tolist())
            top = max(votes.values())
            winners = [c for c, v in votes.items() if v == top]
            credit += (predictions[m, i] in winners) / len(winners)
        expected.append(credit / 400)
    np.testing.assert_allclose(
        _calibration.consensus_agreement(predictions, 3), expected, atol=1e-12
    )


@SETTINGS
@given(st.integers(0, 10_000))
def test_confidence_gap_excess_is_a_lower_bound_on_the_calibration_difference(seed):
    rng = np.random.default_rng(seed)
    n, n_models = 50, 4
    labels = rng.integers(0, 3, n)
    probs = [softmax_rows(rng.normal(size=(n, 3)) * rng.uniform(0.1, 5)) for _ in range(n_models)]
    predictions = np.array([p.argmax(axis=1) for p in probs])
    confidence = np.array([p.max(axis=1).mean() for p in probs])
    calibration_gap = confidence - (predictions == labels).mean(axis=1)
    excess = _calibration.confidence_gap_excess(confidence, predictions)
    difference = np.abs(calibration_gap[:, None] - calibration_gap[None, :])
    assert (difference >= excess - 1e-12).all()


def test_an_over_confident_weak_model_is_noted_without_labels_and_warned_about_with_them():
    outputs, labels = zoo(n=600, n_models=5, seed=3)
    # the weakest model made extremely sharp: most confident, least accurate
    outputs["m0"] = softmax_rows(np.log(outputs["m0"]) * 20)
    label_free = rank_models(outputs, n_bootstrap=0)
    assert label_free.predicted_ranking[0] == "m0" and label_free.consensus_spearman < 0.4
    assert any("majority vote" in note for note in label_free.notes)
    result = rank_models(outputs, labels=labels, n_bootstrap=0)
    assert result.true_ranking[-1] == "m0" and result.spearman < 0.5
    assert any("agrees poorly with accuracy" in w for w in result.warnings)
    assert any("temperatures" in w for w in result.warnings)


def test_equal_accuracies_give_nan_correlations_and_no_verdict():
    outputs, labels = zoo(n=200, n_models=3)
    same = outputs["m2"]
    outputs = {"sharp": softmax_rows(np.log(same) * 3), "plain": same, "soft": same**0.3}
    outputs["soft"] = outputs["soft"] / outputs["soft"].sum(axis=1, keepdims=True)
    result = rank_models(outputs, labels=labels, n_bootstrap=20, random_state=0)
    assert np.ptp(result.accuracy) == 0.0  # tempering keeps every prediction
    assert np.isnan(result.spearman) and np.isnan(result.kendall)
    assert not any("agrees poorly" in w for w in result.warnings)
    assert any("mean confidence minus accuracy" in note for note in result.notes)
    assert json.loads(json.dumps(result.to_dict(), allow_nan=False))["spearman"]["value"] is None


def test_well_ordered_models_get_no_warning():
    outputs, labels = zoo(n=600, n_models=5, seed=3)
    result = rank_models(outputs, labels=labels, n_bootstrap=0)
    assert result.spearman == 1.0 and result.warnings == ()
    assert result.consensus_spearman == 1.0


# --- bad input -------------------------------------------------------------------------------


def bad_calls():
    outputs, labels = zoo(n=20)
    good = outputs["m1"]
    short = {"a": good, "b": good[:10]}
    token = TokenLogProbs([[-0.1]] * 20)
    return [
        (
            "rows not distributions",
            dict(outputs={"a": good, "b": good * 0.9}),
            r"outputs\['b'\]\[0\].*probability distribution.*from_logits",
        ),
        (
            "negative probability",
            dict(outputs={"a": good, "b": good - 0.5}),
            r"outputs\['b'\]\[\d+, \d+\].*probability \(>= 0; pass from_logits=True for logits\b",
        ),
        (
            "NaN",
            dict(outputs={"a": good, "b": np.where(good > 0.5, np.nan, good)}),
            r"outputs\['b'\].*finite",
        ),
        (
            "NaN logits",
            dict(outputs={"a": good, "b": np.full((20, 3), np.nan)}, from_logits=True),
            r"outputs\['b'\].*finite",
        ),
        ("mismatched n", dict(outputs=short), r"same number of items.*a: 20, b: 10"),
        ("single model", dict(outputs={"a": good}), r"outputs: expected at least 2 models"),
        ("not a mapping", dict(outputs=[good, good]), r"outputs: expected a mapping"),
        ("1-D output", dict(outputs={"a": good, "b": good[:, 0]}), r"outputs\['b'\].*\(n, K\)"),
        (
            "one class",
            dict(outputs={"a": good[:, :1] * 0 + 1, "b": good[:, :1] * 0 + 1}),
            r"K >= 2",
        ),
        (
            "different K",
            dict(outputs={"a": good, "b": softmax_rows(np.ones((20, 4)))}),
            r"same number of classes",
        ),
        ("unknown score", dict(outputs=outputs, score="auc"), r"score: expected one of"),
        (
            "labels out of range",
            dict(outputs=outputs, labels=labels + 3),
            r"labels\[\d+\]: expected a class index in \[0, 3\)",
        ),
        ("labels too few", dict(outputs=outputs, labels=labels[:5]), r"labels: expected 20"),
        (
            "labels unknown name",
            dict(outputs=outputs, labels=["x"] * 20, classes=["a", "b", "c"]),
            r"labels: expected values among classes",
        ),
        (
            "text labels without classes",
            dict(outputs=outputs, labels=["a"] * 20),
            r"labels: expected class indices.*classes=",
        ),
        (
            "labels and correct",
            dict(outputs=outputs, labels=labels, correct={}),
            r"correct: expected None when labels",
        ),
        (
            "correct for too few",
            dict(outputs=outputs, correct={"m0": labels == 0}),
            r"correct: expected a mapping with one entry per model",
        ),
        (
            "calibration without labels",
            dict(outputs=outputs, calibration_size=5),
            r"labels: expected the true labels when calibration_size",
        ),
        (
            "calibration too big",
            dict(outputs=outputs, labels=labels, calibration_size=19),
            r"calibration_size: expected at most 18",
        ),
        (
            "calibration labels alone",
            dict(outputs=outputs, calibration_labels=labels),
            r"calibration_labels: expected both",
        ),
        (
            "entropy of tokens",
            dict(outputs={"a": token, "b": token}, score="entropy"),
            r"score: expected 'nll' or 'max_prob' for TokenLogProbs",
        ),
        (
            "labels for tokens",
            dict(outputs={"a": token, "b": token}, labels=labels),
            r"labels: expected class-probability outputs",
        ),
        (
            "key without positions",
            dict(outputs={"a": token, "b": token}, token_position="key"),
            r"token_position: expected 'first', 'mean' or 'sum' without key_positions",
        ),
        (
            "negative bootstrap",
            dict(outputs=outputs, n_bootstrap=-1),
            r"n_bootstrap: expected an integer >= 0",
        ),
        (
            "level of 1",
            dict(outputs=outputs, confidence_level=1.0),
            r"confidence_level: expected a number in \(0, 1\)",
        ),
    ]


@pytest.mark.parametrize("case", bad_calls(), ids=lambda case: case[0])
def test_bad_input_raises_an_input_error_naming_the_argument(case):
    _, kwargs, message = case
    kwargs = {"n_bootstrap": 0, **kwargs}
    outputs = kwargs.pop("outputs")
    with pytest.raises(InputError, match=message):
        rank_models(outputs, **kwargs)


@pytest.mark.parametrize("value", ["no", "false", 1, None])
def test_from_logits_must_be_a_bool(value):
    """A truthy non-bool (the text "no", 1) switched probabilities to logits without a word."""
    p = np.array([[0.9, 0.1], [0.8, 0.2], [0.95, 0.05]])
    with pytest.raises(InputError, match=r"^from_logits: expected True or False"):
        rank_models({"v": p[:, ::-1], "s": p}, from_logits=value, n_bootstrap=0)
    with pytest.raises(InputError, match=r"^from_logits: expected True or False"):
        item_scores(p, "max_prob", from_logits=value)
    assert item_scores(p, "max_prob", from_logits=np.bool_(False)).tolist() == [0.9, 0.8, 0.95]


def test_logits_are_accepted_where_probabilities_would_be_refused():
    logits = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(InputError):
        rank_models({"a": logits, "b": logits * 2}, n_bootstrap=0)
    result = rank_models({"a": logits, "b": logits * 2}, from_logits=True, n_bootstrap=0)
    assert result.predicted_ranking == ("b", "a")


@pytest.mark.parametrize(
    ("sequences", "keys", "message"),
    [
        ([[-0.1, 0.5]], None, r"sequences\[0\]: expected log-probabilities \(<= 0\)"),
        ([[]], None, r"sequences\[0\]: expected at least 1 element"),
        ("text", None, r"sequences: expected a sequence of 1-D arrays"),
        ([[-0.1], [-0.2, -0.3]], [0, 2], r"key_positions\[1\]: expected an index in \[0, 2\)"),
        ([[-0.1]], [0, 0], r"key_positions: expected 1 positions"),
    ],
)
def test_bad_token_log_probabilities_are_refused(sequences, keys, message):
    with pytest.raises(InputError, match=message):
        TokenLogProbs(sequences, key_positions=keys)


# --- documentation ---------------------------------------------------------------------------


def test_docstring_examples_run():
    for module in (scores, ranking):
        failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert tried > 0 and failures == 0


def test_docs_page_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", DOCS_PAGE.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOCS_PAGE), "exec"), {"__name__": "docs_example"})
        plt.close("all")

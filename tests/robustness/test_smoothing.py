"""SmoothedClassifier: sampling, prediction, certification, torch and numpy base models."""

import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from interval_oracle import IntervalClassifier, exact_probabilities
from scipy import stats

from trustlab.errors import InputError
from trustlab.robustness import (
    ABSTAIN,
    SmoothedClassifier,
    certify_counts,
    make_cost_matrix,
)
from trustlab.robustness._sampling import LabelFunction, count_labels, point_streams

torch.set_num_threads(1)

SPEC = IntervalClassifier([0.0, 1.0, 1.5], direction=[1.0, -2.0, 0.5])


def test_counts_follow_the_exact_smoothed_probabilities():
    smooth = SmoothedClassifier(SPEC, sigma=0.5, n_classes=4)
    n = 40_000
    counts = smooth.sample_counts(SPEC.point(np.array([0.5, 1.2])), n, random_state=0)
    for row, s0 in zip(counts, (0.5, 1.2), strict=True):
        p = exact_probabilities(SPEC.thresholds, s0, 0.5)
        low = stats.binom.ppf(1e-7, n, p)
        high = stats.binom.ppf(1 - 1e-7, n, p)
        assert np.all((row >= low) & (row <= high)), (row, n * p)


def test_labels_and_scores_give_the_same_counts():
    def scores(batch):
        labels = SPEC(batch)
        return np.eye(4)[labels] + 0.1

    X = SPEC.point(np.linspace(-0.5, 2.0, 5))
    by_labels = SmoothedClassifier(SPEC, 0.5, 4).sample_counts(X, 3_000, random_state=1)
    by_scores = SmoothedClassifier(scores, 0.5, 4).sample_counts(X, 3_000, random_state=1)
    assert np.array_equal(by_labels, by_scores)


@settings(max_examples=15, deadline=None)
@given(batch_size=st.integers(1, 5_000), num=st.integers(1, 3_000))
def test_counts_do_not_depend_on_the_batch_size(batch_size, num):
    X = SPEC.point(np.array([0.1, 0.9, 1.4]))
    reference = SmoothedClassifier(SPEC, 0.4, 4, batch_size=10_000).sample_counts(
        X, num, random_state=5
    )
    counts = SmoothedClassifier(SPEC, 0.4, 4, batch_size=batch_size).sample_counts(
        X, num, random_state=5
    )
    assert np.array_equal(counts, reference)
    assert np.all(counts.sum(axis=1) == num)


def test_each_point_draws_from_its_own_stream():
    X = SPEC.point(np.array([0.1, 0.9, 1.4]))
    smooth = SmoothedClassifier(SPEC, 0.4, 4, batch_size=257)
    together = smooth.sample_counts(X, 2_000, random_state=9)
    for i in range(3):
        streams = point_streams(9, [i])
        alone = count_labels(LabelFunction(SPEC, 4), X[i : i + 1], 2_000, streams, 0.4, 4, 64)
        assert np.array_equal(alone[0], together[i])


def test_same_seed_same_result_and_other_seed_other_noise():
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    x = SPEC.point(0.7)
    first = smooth.certify(x, 1, 100, 5_000, 0.01, random_state=3)
    assert smooth.certify(x, 1, 100, 5_000, 0.01, random_state=3) == first
    assert smooth.certify(x, 1, 100, 5_000, 0.01, random_state=4).counts != first.counts


def test_certify_equals_the_counts_level_api_on_the_same_stream():
    smooth = SmoothedClassifier(SPEC, 0.5, 4, batch_size=999)
    x, costs = SPEC.point(0.5), make_cost_matrix(4, {1: [2, 3]})
    cert = smooth.certify(x, 1, 100, 20_000, 0.001, costs, random_state=11)
    streams = point_streams(11, [0])
    labels = LabelFunction(SPEC, 4)
    selection = count_labels(labels, x[None], 100, streams, 0.5, 4, 1_000)
    estimation = count_labels(labels, x[None], 20_000, streams, 0.5, 4, 1_000)
    expected = certify_counts(
        estimation[0], int(selection.argmax()), 1, sigma=0.5, alpha=0.001, cost_matrix=costs,
        n0=100,
    )  # fmt: skip
    assert cert == expected


def test_predict_abstains_by_the_binomial_test():
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    for s0, seed in [(0.0, 1), (0.5, 2), (1.25, 3), (-2.0, 4)]:
        x = SPEC.point(s0)
        predicted = smooth.predict(x, 500, 0.05, random_state=seed)
        counts = smooth.sample_counts(x[None], 500, random_state=seed)[0]
        top, second = np.sort(counts)[::-1][:2]
        pvalue = stats.binomtest(int(top), int(top + second), 0.5).pvalue
        assert predicted == (ABSTAIN if pvalue > 0.05 else int(np.argmax(counts)))
    # On the boundary between two equally likely classes it abstains; far inside, it answers.
    assert smooth.predict(SPEC.point(0.0), 2_000, 0.001, random_state=0) == ABSTAIN
    assert smooth.predict(SPEC.point(-2.0), 2_000, 0.001, random_state=0) == 0


def linear_model(weights, bias):
    model = torch.nn.Linear(weights.shape[1], weights.shape[0])
    with torch.no_grad():
        model.weight.copy_(torch.as_tensor(weights))
        model.bias.copy_(torch.as_tensor(bias))
    return model


def test_torch_module_and_its_numpy_twin_give_the_same_counts():
    rng = np.random.default_rng(0)
    weights = rng.normal(size=(3, 6)).astype(np.float32)
    bias = rng.normal(size=3).astype(np.float32)
    model = linear_model(weights, bias)
    model.train()

    def twin(batch):
        return batch.astype(np.float32) @ weights.T + bias

    X = rng.normal(size=(4, 6)).astype(np.float32)
    ours = SmoothedClassifier(model, 0.3, 3, batch_size=700).sample_counts(X, 5_000, random_state=2)
    theirs = SmoothedClassifier(twin, 0.3, 3).sample_counts(X, 5_000, random_state=2)
    # Float32 sums in another order may flip a label at an exact tie: allow a handful.
    assert np.abs(ours - theirs).sum() <= 4
    assert model.training  # the module's mode is restored after evaluation


def test_importing_robustness_does_not_import_torch():
    code = "import sys, trustlab.robustness; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_numpy_certification_works_without_torch_and_torch_features_say_which_extra():
    code = """
import sys

class NoTorch:  # as if torch were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")

sys.meta_path.insert(0, NoTorch())
import numpy as np
from trustlab.errors import ConfigError
from trustlab.robustness import SmoothedClassifier, digits_model
smooth = SmoothedClassifier(lambda b: (b[:, 0] > 0).astype(int), 0.5, 2)
cert = smooth.certify(np.array([1.0]), 1, 10, 1000, 0.01, random_state=0)
assert cert.radius_std > 0
try:
    digits_model()
except ConfigError as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "trustlab[torch]" in out.stdout


@pytest.mark.parametrize("sigma", [0.0, -0.25, float("nan")])
def test_non_positive_sigma_is_refused(sigma):
    with pytest.raises(InputError, match="sigma"):
        SmoothedClassifier(SPEC, sigma, 4)


def test_n0_above_n_is_refused():
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    with pytest.raises(InputError, match=r"n0: expected at most n = 100"):
        smooth.certify(SPEC.point(0.5), 1, 200, 100, 0.01)


@pytest.mark.parametrize(
    "costs, message",
    [
        (np.zeros((3, 3)), r"cost_matrix: expected a \(4, 4\) matrix"),
        (
            -make_cost_matrix(4, {1: [2]}),
            r"cost_matrix: expected non-negative costs, got -1 at index \(1, 2\)",
        ),
        (np.eye(4), r"cost_matrix: expected 0 on the diagonal .*, got 1 at index \(0, 0\)"),
    ],
)
def test_bad_cost_matrix_is_refused_by_certify(costs, message):
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    with pytest.raises(InputError, match=message):
        smooth.certify(SPEC.point(0.5), 1, 10, 100, 0.01, costs)


def test_bad_base_model_output_is_refused():
    smooth = SmoothedClassifier(lambda b: np.zeros((len(b), 3)), 0.5, 4)
    with pytest.raises(InputError, match="base_model output"):
        smooth.sample_counts(np.zeros((2, 3)), 10, random_state=0)
    smooth = SmoothedClassifier(lambda b: np.full(len(b), 7), 0.5, 4)
    with pytest.raises(InputError, match=r"labels in \[0, 4\)"):
        smooth.sample_counts(np.zeros((2, 3)), 10, random_state=0)


@pytest.mark.parametrize(("outputs", "n_classes"), [(1, 2), (3, 5), (5, 3)])
def test_a_torch_model_of_the_wrong_output_width_is_refused(outputs, n_classes):
    """The width was never checked: a (batch, 1) logit model was argmaxed to class 0 always,
    and 3 outputs were taken for 5 classes."""
    torch.manual_seed(0)
    smooth = SmoothedClassifier(torch.nn.Linear(2, outputs), 0.5, n_classes)
    message = rf"base_model output: expected \(20, {n_classes}\) class scores .*\(20, {outputs}\)"
    with pytest.raises(InputError, match=message):
        smooth.sample_counts(np.zeros((2, 2), np.float32), 10, random_state=0)


def test_non_callable_base_model_and_bad_label_are_refused():
    with pytest.raises(InputError, match="base_model"):
        SmoothedClassifier("model.pt", 0.5, 4)
    smooth = SmoothedClassifier(SPEC, 0.5, 4)
    with pytest.raises(InputError, match="y"):
        smooth.certify(SPEC.point(0.5), 4, 10, 100, 0.01)

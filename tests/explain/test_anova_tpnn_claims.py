"""The claims of ANOVA-TPNN at test-suite size: it recovers the true (purified) components, its
components are stable across seeds where a neural additive model's are not, it is about as
accurate as an additive EBM on the two bundled datasets, and its default fit (learning-rate
cuts on plateaus) is more accurate than a constant rate and than the neural additive model."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from interpret.glassbox import ExplainableBoostingClassifier
from sklearn.model_selection import train_test_split

from trustlab.data import load_dataset
from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_anova_tpnn import make_data  # noqa: E402  (the benchmark's problem)
from nam_baseline import NeuralAdditiveBaseline  # noqa: E402  (a comparison model, not trustlab)

ACCURACY_MARGIN = 0.03  # ANOVA-TPNN's test accuracy is at least EBM's minus 3 points
SEEDS = range(5)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def truth(a, b):
    """f1(x1) + f2(x2) + f12(x1, x2), where f12 is not pure: part of it is a main effect."""
    return np.sin(np.pi * a) + b**2 + 2 * (a + 0.5) * b


def purified_truth(X):
    """The true components under the product of the empirical marginals, by definition:
    g1(a) = mean_b F(a, b) - mu, g2(b) = mean_a F(a, b) - mu, g12 = F - g1 - g2 - mu."""
    a, b = X[:, 0], X[:, 1]
    table = truth(a[:, None], b[None, :])
    mu = table.mean()
    g1, g2 = table.mean(axis=1) - mu, table.mean(axis=0) - mu
    return {"x0": g1, "x1": g2, "x0 & x1": truth(a, b) - g1 - g2 - mu}


def synthetic(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, truth(X[:, 0], X[:, 1]) + 0.1 * rng.normal(size=n)


def test_recovers_the_true_purified_components():
    X, y = synthetic(2000, 4)
    model = ANOVATPNN(max_epochs=150, random_state=0, n_jobs=1).fit(X, y)
    parts = model.components(X)
    for name, expected in purified_truth(X).items():
        assert np.corrcoef(parts[name], expected)[0, 1] >= 0.95, name
    # the irrelevant features get (almost) nothing
    strongest = set(model.importance().top(3))
    assert strongest == {"x0", "x1", "x0 & x1"}


def test_components_are_stable_across_seeds_unlike_a_neural_additive_model():
    X, y = synthetic(1000, 2, seed=1)
    settings = dict(max_epochs=100, n_jobs=1)
    ours = component_stability([ANOVATPNN(random_state=s, **settings).fit(X, y) for s in SEEDS], X)
    nam = component_stability(
        [NeuralAdditiveBaseline(random_state=s, **settings).fit(X, y) for s in SEEDS], X
    )
    assert ours.names == nam.names == ("x0", "x1", "x0 & x1")
    assert np.all(ours.mean_correlation >= 0.95), ours.summary()
    assert nam.overall_correlation < 0.95, nam.summary()
    assert np.all(ours.normalised_variance < nam.normalised_variance)


@pytest.mark.parametrize("name", ["chile", "logan"])
def test_accuracy_is_within_the_margin_of_an_additive_ebm(name):
    dataset = load_dataset(name)
    frame = dataset.frame.dropna(subset=list(dataset.features))
    X, y = frame[list(dataset.features)], frame[dataset.label].to_numpy()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    ebm = ExplainableBoostingClassifier(interactions=0, outer_bags=4, n_jobs=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ebm_accuracy = float(np.mean(ebm.fit(X_train, y_train).predict(X_test) == y_test))
    model = ANOVATPNN(random_state=0, n_jobs=1).fit(X_train, y_train)
    ours = model.score(X_test, y_test)
    assert ours >= ebm_accuracy - ACCURACY_MARGIN, (ours, ebm_accuracy)
    assert ours > np.mean(y_test == max(set(y_train), key=list(y_train).count))  # beats majority


@pytest.mark.slow
def _rmse_ratios(seed: int) -> tuple[float, float]:
    """Test RMSE of the default fit over that of a constant rate and of the NAM baseline, for
    one seed of the claim below (a background job: tests/background_jobs.py)."""
    data = make_data(2_000, 6, seed)
    test = make_data(5_000, 6, seed + 1)
    common = dict(random_state=seed, n_jobs=1)
    default = _test_rmse(ANOVATPNN(**common), data, test)
    return (
        default / _test_rmse(ANOVATPNN(lr_decay=1.0, **common), data, test),
        default / _test_rmse(NeuralAdditiveBaseline(**common), data, test),
    )


BACKGROUND_JOBS = {f"anova-claims/{seed}": (_rmse_ratios, {"seed": seed}) for seed in range(3, 8)}


def test_default_fit_beats_the_constant_rate_and_the_neural_additive_model(background):
    """The benchmark's problem at 2,000 rows x 6 features, seeds 3-7 (the schedule was chosen on
    seeds 10-12 at 10,000 x 10). Test RMSE against the noiseless truth, as ratios per seed:
    default / constant rate measured 0.91, 0.79, 0.98, 0.86, 0.79 (seed 8: 0.78); default / NAM
    baseline (same loop and schedule) 0.76, 0.89, 0.90, 0.78, 0.79 (seed 8: 0.74). The median of
    five must stay at most 0.95: three seeds would have to move past it to fail."""
    ratios = np.array(list(background.results(BACKGROUND_JOBS).values()))
    against_constant, against_nam = ratios[:, 0], ratios[:, 1]
    print("default / constant:", np.round(against_constant, 3))
    print("default / NAM:", np.round(against_nam, 3))
    assert np.median(against_constant) <= 0.95, against_constant
    assert np.median(against_nam) <= 0.95, against_nam


def _test_rmse(model, data, test):
    """RMSE against the noiseless truth of ``test`` after fitting on ``data`` (benchmark rows)."""
    (X, _, y), (X_test, truth_test, _) = data, test
    return float(np.sqrt(np.mean((model.fit(X, y).predict(X_test) - truth_test) ** 2)))

"""The bootstrap intervals of the rank correlations end on values the correlation can take."""

import itertools

import numpy as np
from scipy import stats

from trustlab.evaluation import rank_models


def attainable(n_models: int) -> np.ndarray:
    """Every value rho and tau-b of n_models can take, ties included, by brute force."""
    orders = list(itertools.product(range(n_models), repeat=n_models))
    values = [np.nan]
    for x, y in itertools.product(orders, orders):
        if len(set(x)) > 1 and len(set(y)) > 1:
            values += [stats.spearmanr(x, y).statistic, stats.kendalltau(x, y).statistic]
    return np.array(values)


def test_correlation_intervals_of_two_models_end_on_minus_one_or_one():
    rng = np.random.default_rng(2)  # accuracies 0.2 and 0.45: rho is defined (with seed 0 they
    labels = rng.integers(3, size=20)  # tie, rho is not, and neither is its interval)
    outputs = {f"m{k}": rng.dirichlet(np.ones(3), size=20) for k in range(2)}
    for seed in range(10):  # few resamples: the 2.5% point falls between two of them
        result = rank_models(outputs, labels=labels, n_bootstrap=10, random_state=seed)
        assert not np.isnan(result.spearman)
        for interval in (result.spearman_interval, result.kendall_interval):
            assert set(interval) <= {-1.0, 1.0}, interval


def test_correlation_intervals_of_three_models_are_attainable_values():
    rng = np.random.default_rng(2)  # accuracies 0.225, 0.175, 0.2 (all 0.25 with seed 1: no rho)
    labels = rng.integers(4, size=40)
    outputs = {f"m{k}": rng.dirichlet(np.ones(4) * (k + 1), size=40) for k in range(3)}
    values = attainable(3)
    for seed in range(10):
        result = rank_models(outputs, labels=labels, n_bootstrap=15, random_state=seed)
        assert not np.isnan(result.spearman)
        for interval in (result.spearman_interval, result.kendall_interval):
            assert all(np.isclose(v, values, equal_nan=True).any() for v in interval), interval
            assert interval[0] <= interval[1]

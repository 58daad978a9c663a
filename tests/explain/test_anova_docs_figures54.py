"""docs/explain-anova-tpnn.md said the sum-to-zero conditions of the fitted components hold to
"about 1e-14" of a component's range (the constants are recomputed on all training rows in
float64); the identifiability tests only ask for the issue's 1e-6. Review 54 measured, on
test_anova_tpnn.py's discrete regression problem (1,200 rows, 25 epochs), the worst main-effect
mean or pair's weighted mean at 7.1e-14, 2.0e-13 and 9.6e-14 of the range (random_state 0, 1, 2),
so the page now says up to 2e-13. The bound here, 1e-12, is float noise with a margin of five
over the worst of those and six orders under the issue's tolerance: a centring done in float32 or
on one batch breaks it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trustlab.explain.anova_tpnn import ANOVATPNN

FLOAT_NOISE = 1e-12


def _problem(n=1200, seed=0):
    """test_anova_tpnn.py's discrete_regression: three features with few distinct values."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [rng.integers(0, 25, n), np.round(rng.gamma(2.0, 3.0, n)), rng.integers(0, 8, n)]
    ).astype(float)
    y = np.sin(X[:, 0] / 4) + 0.1 * X[:, 1] + 0.2 * (X[:, 0] - 12) * (X[:, 2] - 3.5) / 10
    return pd.DataFrame(X, columns=["a", "b", "c"]), y + 0.1 * rng.normal(size=n)


def _worst_relative_means(model, X):
    parts = model.components(X)
    worst = 0.0
    for name in model.feature_names_:
        values = parts[name]
        worst = max(worst, np.abs(values.mean()) / np.ptp(values))
    for a, b in [("a", "b"), ("a", "c"), ("b", "c")]:
        values_a, count_a = np.unique(X[a], return_counts=True)
        values_b, count_b = np.unique(X[b], return_counts=True)
        grid = pd.DataFrame({c: np.repeat(X[c].iloc[0], values_a.size * values_b.size) for c in X})
        mesh_a, mesh_b = np.meshgrid(values_a, values_b, indexing="ij")
        grid[a], grid[b] = mesh_a.ravel(), mesh_b.ravel()
        table = model.components(grid)[(a, b)].reshape(values_a.size, values_b.size)
        scale = np.ptp(table)
        worst = max(worst, np.abs(count_a @ table / count_a.sum()).max() / scale)
        worst = max(worst, np.abs(table @ count_b / count_b.sum()).max() / scale)
    return worst


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fitted_components_sum_to_zero_to_float_noise(seed):
    X, y = _problem()
    model = ANOVATPNN(max_epochs=25, random_state=seed, n_jobs=1).fit(X, y)
    assert _worst_relative_means(model, X) <= FLOAT_NOISE

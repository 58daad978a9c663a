"""component_stability where a correlation across rows is not defined: one row, or a component
that is constant on the rows compared (e.g. every row repeated)."""

import json
import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN, component_stability


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X[:, 0] ** 2 + X[:, 1]
    models = [
        ANOVATPNN(order=1, max_epochs=5, random_state=s, n_jobs=1).fit(X, y) for s in range(2)
    ]
    return models, X


def test_one_row_is_refused_naming_X(runs):
    models, X = runs
    with pytest.raises(InputError, match=r"^X: expected at least 2 rows"):
        component_stability(models, X[:1])


def test_repeated_rows_say_not_defined_instead_of_nan(runs):
    models, X = runs
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Mean of empty slice"
        result = component_stability(models, np.repeat(X[:1], 5, axis=0))
        text = result.summary()
        result.plot()
    assert "nan" not in text.lower()
    assert "not defined" in text
    assert result.n_undefined == 2
    assert np.isnan(result.overall_correlation)
    assert json.loads(json.dumps(result.to_dict()))["n_undefined"] == 2


def test_defined_components_are_averaged_alone(runs):
    models, X = runs
    rows = X[:50].copy()
    rows[:, 1] = rows[0, 1]  # x1 constant on these rows: its component is too
    result = component_stability(models, rows)
    assert np.isnan(result.mean_correlation[1]) and not np.isnan(result.mean_correlation[0])
    assert result.overall_correlation == pytest.approx(result.mean_correlation[0])
    assert "over 1 of 2 components" in result.summary()

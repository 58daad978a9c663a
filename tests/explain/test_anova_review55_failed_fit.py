"""ANOVA-TPNN review 55: a fit that fails after the components are chosen (training diverged,
Ctrl-C, an error in the progress callback) leaves the model not fitted. It used to keep the new
feature map and components beside the old weights: a failed refit then predicted silently wrong
numbers, and a failed first fit raised AttributeError instead of NotFittedError. Also: each main
effect is the partial dependence of the fitted model, centred (a brute-force check)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from test_anova_tpnn import _one_torch_thread  # noqa: F401  (torch on one thread, autouse)

from trustlab.errors import BackendError
from trustlab.explain.anova_tpnn import ANOVATPNN


def _data(n=120, seed=55):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + X[:, 0] * X[:, 1] + 0.05 * rng.normal(size=n)


def _interrupt(epoch, total, loss):
    if epoch == 1:
        raise KeyboardInterrupt


def test_a_failed_refit_leaves_the_model_not_fitted():
    X, y = _data()
    model = ANOVATPNN(max_epochs=2, n_basis=3, random_state=0, n_jobs=1).fit(X, y)
    model.set_params(learning_rate=1e6)
    with pytest.raises(BackendError, match="diverged"):
        model.fit(X * 100 + 5, y)  # was: predicted with the new map and the old weights
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.set_params(learning_rate=2e-2)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y, progress=_interrupt)
    with pytest.raises(NotFittedError):
        model.components(X)
    assert not [k for k in vars(model) if k.endswith("_")]


def test_a_failed_first_fit_says_not_fitted():
    X, y = _data()
    model = ANOVATPNN(max_epochs=2, n_basis=3, learning_rate=1e6, n_jobs=1)
    with pytest.raises(BackendError):
        model.fit(X, y)
    with pytest.raises(NotFittedError):  # was: AttributeError '_term_groups'
        model.predict(X)


def test_main_effects_are_the_centred_partial_dependence():
    X, y = _data(n=150, seed=551)
    model = ANOVATPNN(max_epochs=3, n_basis=4, random_state=1, n_jobs=1).fit(X, y)
    for j, name in enumerate(model.component_names_[:2]):
        points = X[:6, j]
        dependence = []
        for value in points:
            grid = X.copy()
            grid[:, j] = value
            dependence.append(model.predict(grid).mean())
        at = X[:6].copy()
        effect = model.components(at)[name]
        gap = np.asarray(dependence) - effect
        assert np.ptp(gap) <= 1e-9 * np.ptp(model.components(X)[name])

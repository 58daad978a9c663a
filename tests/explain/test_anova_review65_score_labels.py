"""Diff review 65 G of c1102265: ``ANOVATPNN.score`` and y of another kind than the model's.

A classifier fitted on string labels scored with integer labels raised scikit-learn's
``ValueError: Mix of label input types (string and number)``, not naming ``y``; and after
c1102265 a regression model scored complex y by dropping the imaginary parts (R^2 0.89 for
``y + 1j``; before it, scikit-learn's ``Complex data not supported``). Both are now InputError
naming ``y``.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


@pytest.fixture(scope="module")
def data():
    x = np.random.default_rng(0).normal(size=(30, 1))
    return x, x[:, 0] ** 2


def _model(x, y):
    return ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1).fit(x, y)


def test_classifier_score_refuses_labels_of_another_type(data):
    x, y = data
    labels = np.where(y > 0.5, "a", "b")
    model = _model(x, labels)
    for other in (np.arange(30) % 2, np.full(30, 0.5)):
        with pytest.raises(InputError, match=r"^y: expected labels of the model's classes \['a'"):
            model.score(x, other)
    assert model.score(x, labels) == np.mean(model.predict(x) == labels)


def test_regression_score_refuses_complex_y(data):
    x, y = data
    model = _model(x, y)
    with pytest.raises(InputError, match=r"^y: expected real numbers for a regression model"):
        model.score(x, y + 1j)
    assert model.score(x, y.astype(np.complex128).real) == model.score(x, y)

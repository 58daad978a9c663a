"""Review 65: ``ANOVATPNN.score`` refuses a bad ``y`` naming it.

It passed ``y`` straight to scikit-learn: one value too few gave ``ValueError: Found input
variables with inconsistent numbers of samples: [5, 80]``, an infinite value ``Input contains
infinity ...`` and class labels scored by a regression model ``could not convert string to float``,
none naming ``y``. Now each is an InputError naming ``y``, as ``summarize`` says it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 1))
    return x, x[:, 0] ** 2


@pytest.fixture(scope="module")
def regressor(data):
    x, y = data
    return ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1).fit(x, y)


@pytest.fixture(scope="module")
def classifier(data):
    x, y = data
    model = ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1)
    return model.fit(x, np.where(y > 0.5, "a", "b"))


def test_regression_score_refuses_bad_y_naming_it(regressor, data):
    x, y = data
    bad = {
        "one value per row of X (30)": y[:5],
        "finite numbers": np.r_[y[:-1], np.inf],
        "numbers for a regression model": np.where(y > 0.5, "a", "b"),
    }
    for expected, target in bad.items():
        with pytest.raises(InputError, match="^y: expected " + re.escape(expected)):
            regressor.score(x, target)
    # good y: the same R^2 as scikit-learn's (the power-of-2 scaling is exact)
    from sklearn.metrics import r2_score

    assert regressor.score(x, y.tolist()) == r2_score(y, regressor.predict(x))


def test_classification_score_refuses_y_of_another_length(classifier, data):
    x, y = data
    labels = np.where(y > 0.5, "a", "b")
    with pytest.raises(InputError, match=r"^y: expected one value per row of X \(30\)"):
        classifier.score(x, labels[:5])
    assert classifier.score(x, labels) == np.mean(classifier.predict(x) == labels)

"""Review 64: a SafetyPolytope fit whose training diverges is refused (it returned NaN facets,
which flag nothing: every state was called safe), and a refit that fails or is interrupted
keeps the previous fit whole (the new standardisation was stored before training)."""

import numpy as np
import pytest

import trustlab.safety.polytope.estimator as estimator
from trustlab.errors import BackendError
from trustlab.safety import SafetyPolytope

X = np.random.default_rng(0).normal(size=(30, 3))
UNSAFE = X[:, 0] > 0.3


@pytest.mark.parametrize(
    "settings",
    [{"margin": 1e300}, {"encoder": "concept", "n_concepts": 4, "learning_rate": 1e30}],
)
def test_a_diverged_fit_is_refused(settings):
    polytope = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0, **settings)
    with pytest.raises(BackendError, match="training diverged: its normals"):
        polytope.fit(X, UNSAFE)  # was: NaN normals, is_unsafe False on every row


def test_a_failed_refit_keeps_the_previous_fit(monkeypatch):
    polytope = SafetyPolytope(n_facets=2, max_epochs=2, random_state=0).fit(X, UNSAFE)
    before = polytope.violations(X)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(estimator, "train_polytope", interrupted)
    with pytest.raises(KeyboardInterrupt):
        polytope.fit(100.0 * X + 5.0, UNSAFE)
    np.testing.assert_array_equal(polytope.violations(X), before)  # bit for bit

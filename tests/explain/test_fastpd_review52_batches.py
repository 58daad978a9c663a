"""explain() bounds the components a batch of rows holds by _BATCH_VALUES numbers, counting
every output (review 52: the batch size ignored the outputs, so a 10-class model's batches held
ten times the bound: about 0.7 GB of components per batch for digits, twice that at peak)."""

import numpy as np
from sklearn.ensemble import RandomForestClassifier

from trustlab.explain import FastPD
from trustlab.explain.fastpd import explainer as fastpd_explainer

RNG = np.random.default_rng(52)
X = RNG.normal(size=(600, 5))
Y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-1.0, 0.0, 1.0])  # four classes


def test_a_batch_holds_at_most_the_bound_counting_every_output(monkeypatch):
    model = RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, Y)
    explainer = FastPD(model).fit(X[:100])
    n_components, n_out = explainer._engine.n_components(2), len(explainer.output_names_)
    assert n_out == 4
    monkeypatch.setattr(fastpd_explainer, "_BATCH_VALUES", 100 * n_components * n_out)
    done = []
    explanation = explainer.explain(X, progress=lambda k, n: done.append(k))
    sizes = np.diff([0, *done])
    assert sizes.max() == 100  # rows per batch: the bound over the components of all outputs
    assert done[-1] == len(X)
    whole = explainer.importance(X)  # the same means in one go
    np.testing.assert_allclose(explanation.importance.shap, whole.shap, atol=1e-12)

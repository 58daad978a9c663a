"""An interrupted overwrite of a saved ANOVATPNN (diff review 65 E): save wrote model.pt, then
model.json, and left an earlier save's model.json in place meanwhile. Stopped between the two
(Ctrl-C), load gave the new components under the old target shift and scale (same terms, so
the review-65 terms check passed). Now the old model.json is removed first."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

import trustlab.explain.anova_tpnn._saving as saving  # noqa: E402
from interrupted_saves import stopped_at
from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


def _fit(x, y):
    return ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1).fit(x, y)


def test_an_interrupted_overwrite_does_not_load_under_the_old_scale(tmp_path):
    x = np.random.default_rng(0).normal(size=(30, 2))
    _fit(x, 3 * x[:, 0]).save(tmp_path)
    new = _fit(x, 3000 * x[:, 0] + 5)
    with stopped_at(saving, saving.META_FILE):
        new.save(tmp_path)
    with pytest.raises(InputError):  # the old shift and scale beside the new model.pt loaded
        ANOVATPNN.load(tmp_path)
    new.save(tmp_path)  # a save that completes reads back whole
    np.testing.assert_array_equal(ANOVATPNN.load(tmp_path).predict(x), new.predict(x))

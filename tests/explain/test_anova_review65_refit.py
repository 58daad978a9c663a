"""Review 65: a refit refused before training keeps the fitted model's target scale.

``fit`` stored the new target's shift and scale before checking ``interactions``: a refit with
a misspelt term was refused, the model stayed fitted with its old weights, and its saved
model.json said ``output_shift`` 70.6 and ``output_scale`` 973.8 (the refused target's, y * 1000
+ 5) beside weights fitted with 0.066 and 0.974. Now both are set with the new structure.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


def test_refused_refit_keeps_the_saved_target_scale(tmp_path):
    x = np.random.default_rng(0).normal(size=(30, 2))
    model = ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1).fit(x, x[:, 0])
    before = json.loads((model.save(tmp_path / "before") / "model.json").read_text())
    model.set_params(order=2, interactions=[("x0", "zz")])
    with pytest.raises(InputError, match="^interactions: "):
        model.fit(x, x[:, 0] * 1000 + 5)
    after = json.loads((model.save(tmp_path / "after") / "model.json").read_text())
    assert after["terms"] == before["terms"]  # still the first fit's model
    assert (after["output_shift"], after["output_scale"]) == (
        before["output_shift"],
        before["output_scale"],
    )

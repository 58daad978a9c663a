"""Review 65: a model.json whose terms are not those of model.pt's components is refused.

``ANOVATPNN.load`` took the terms from model.json and the components from model.pt without
comparing them: a model.json listing the main effects in another order loaded, predicted the
same, and named each component after the other feature (measured: y = 3 x0, importance x0 2.81,
x1 0.09; loaded, x1 2.81 and x0 0.09). Now such a folder is refused as not a complete model.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


def test_load_refuses_terms_that_are_not_the_saved_components(tmp_path):
    x = np.random.default_rng(0).normal(size=(30, 2))
    model = ANOVATPNN(order=1, n_basis=2, max_epochs=1, random_state=0, n_jobs=1)
    folder = model.fit(x, 3 * x[:, 0]).save(tmp_path / "model")
    same = ANOVATPNN.load(folder)  # as saved: loads, the same components under the same names
    np.testing.assert_array_equal(same.components(x).values, model.components(x).values)
    assert same.component_names_ == model.component_names_ == ["x0", "x1"]
    meta = json.loads((folder / "model.json").read_text())
    meta["terms"] = [[1], [0]]  # the main effects listed the other way round
    (folder / "model.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"^model: .* is not a complete .*terms"):
        ANOVATPNN.load(folder)

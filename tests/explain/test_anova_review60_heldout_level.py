"""A categorical level held only by rows held out for early stopping (review 60).

Such a level never gets a gradient, so its weights stayed at their random start and gave it a
made-up effect (0.92 here, 0.91 after 40 epochs, on a target of standard deviation 0.7 that the
feature does not affect); it now contributes 0, as a level unseen in training does.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from trustlab.explain.anova_tpnn import ANOVATPNN  # noqa: E402


def test_level_only_in_held_out_rows_contributes_zero():
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame(
        {"x": rng.uniform(-1, 1, n), "c": rng.choice(["u", "v", "w"], n).astype(object)}
    )
    y = np.sin(3 * X["x"].to_numpy()) + 0.1 * rng.normal(size=n)
    X.loc[0, "c"] = "z"  # the level's only row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ANOVATPNN(n_basis=4, max_epochs=2, random_state=10, n_jobs=1).fit(X, y)
    assert 0 in model.validation_rows_  # the seed holds the level's row out (precondition)
    parts = model.components(X)
    # 0 up to rounding (the old code: 0.92, from the weights' random start)
    assert abs(parts["c"][0]) < 1e-12
    assert np.abs(parts["x & c"][X["c"].to_numpy() == "z"]).max() < 1e-12
    # the components still sum to zero over the training rows in each variable
    assert abs(parts["c"].mean()) < 1e-12
    pair = pd.DataFrame({"x": X["x"], "c": "z"})
    assert abs(model.components(pair)["x & c"].mean()) < 1e-12
    for level in ["u", "v", "w"]:
        pair["c"] = level
        assert abs(model.components(pair)["x & c"].mean()) < 1e-12

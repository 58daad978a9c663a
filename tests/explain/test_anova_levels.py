"""ANOVA-TPNN categorical levels that are not text, numbers or booleans (dates, tuples): matched
at fit and after a save/load round trip."""

import numpy as np
import pandas as pd
import pytest

from trustlab.explain.anova_tpnn import ANOVATPNN

pytest.importorskip("torch")


def _fit_and_reload(X, y, tmp_path):
    model = ANOVATPNN(max_epochs=3, random_state=0).fit(X, y)
    return model, ANOVATPNN.load(model.save(tmp_path / "model"))


@pytest.mark.parametrize("unit", ["ns", "s"])
def test_a_date_column_is_matched_at_fit_and_after_loading(unit, tmp_path):
    rng = np.random.default_rng(0)
    dates = pd.to_datetime(rng.choice(["2020-01-01", "2021-06-30", "2022-03-15"], 80))
    X = pd.DataFrame({"a": rng.normal(size=80), "day": dates.as_unit(unit)})
    y = X["a"] + (X["day"].dt.year - 2021) + 0.1 * rng.normal(size=80)
    model, loaded = _fit_and_reload(X, y, tmp_path)
    # every training date is a known level: its component is not the 0 of an unseen level
    assert len(np.unique(model.components(X)["day"])) == 3
    np.testing.assert_array_equal(loaded.components(X).values, model.components(X).values)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_column_of_tuples_survives_saving(tmp_path):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=60), "pair": [(1, 2), (3, 4), (5, 6)] * 20})
    y = X["a"] + rng.normal(size=60)
    model, loaded = _fit_and_reload(X, y, tmp_path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))

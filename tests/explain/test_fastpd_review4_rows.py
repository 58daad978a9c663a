"""FastPD: a row repeated in ``rows`` / ``--rows`` is refused naming it, as in
``background_rows`` (it was explained and written to shap_values.csv twice; review 4, item 7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

from trustlab.errors import InputError
from trustlab.explain.fastpd.table import plan_table


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"])
    model = RandomForestRegressor(n_estimators=3, max_depth=2, random_state=0)
    return model.fit(frame, frame["a"] + frame["b"]), frame


def test_a_repeated_row_is_refused_naming_it(fitted):
    model, frame = fitted
    with pytest.raises(InputError, match=r"^rows: expected distinct rows, got row 5 more than "):
        plan_table(model, frame, rows=[*range(10), 5])
    assert list(plan_table(model, frame, rows=[7, 3]).rows) == [7, 3]  # order kept


def test_the_cli_refuses_a_repeated_row_in_one_line(fitted, tmp_path, capsys):
    import skops.io as sio

    from cli_helpers import one_line, run_main

    model, frame = fitted
    sio.dump(model, tmp_path / "m.skops")
    frame.to_csv(tmp_path / "t.csv", index=False)
    args = ["explain", "fastpd", "--model", tmp_path / "m.skops", "--data", tmp_path / "t.csv"]
    code, _, err = run_main([*args, "--rows", "0:10,5", "--out", tmp_path / "o"], capsys)
    assert code == 2, err
    assert one_line(err).startswith("trustlab: error: --rows: expected distinct rows, got row 5")
    assert not (tmp_path / "o" / "shap_values.csv").exists()

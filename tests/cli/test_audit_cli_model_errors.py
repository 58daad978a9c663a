"""``trustlab audit --model``: a model that cannot predict on the table gives one error line."""

import warnings

import numpy as np
import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(4)
    n = 120
    frame = pd.DataFrame(
        {
            "x1": rng.normal(size=n) * 3,  # values below -1: log1p gives NaN
            "x2": rng.normal(size=n),
            "x3": rng.normal(size=n),
            "g": rng.choice(["u", "v"], size=n),
            "y": rng.choice([0, 1], size=n),
        }
    )
    path = tmp_path_factory.mktemp("model_errors") / "table.csv"
    frame.to_csv(path, index=False)
    return path


def audit(table, model, tmp_path, capsys):
    args = ["audit", "--data", table, "--label", "y", "--group", "g", "--model", model]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run([*args, "--out", tmp_path / "out"], capsys)
    return code, err, caught


def test_a_failing_prediction_is_one_line_without_warnings(table, tmp_path, capsys):
    import skops.io
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    rng = np.random.default_rng(0)
    model = make_pipeline(FunctionTransformer(np.log1p), LogisticRegression())
    model.fit(rng.random((40, 3)), np.arange(40) % 2)  # fitted without column names
    skops.io.dump(model, tmp_path / "log.skops")
    code, err, caught = audit(table, tmp_path / "log.skops", tmp_path, capsys)
    assert code == 2
    line = one_line(err)
    assert line == (
        "trustlab: error: --model: prediction on the data failed "
        "(ValueError: Input X contains NaN.)"
    )
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("fitted_on", [1, 2])
def test_a_model_fitted_on_other_columns_says_how_many(table, tmp_path, capsys, fitted_on):
    import skops.io
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    model = LogisticRegression().fit(rng.normal(size=(40, fitted_on)), np.arange(40) % 2)
    skops.io.dump(model, tmp_path / "lr.skops")
    code, err, _ = audit(table, tmp_path / "lr.skops", tmp_path, capsys)
    assert code == 2
    column = "column" if fitted_on == 1 else "columns"
    assert one_line(err).startswith(
        f"trustlab: error: --model: the model expects {fitted_on} {column}, the table gives 3 "
        "(x1, x2, x3)"
    )

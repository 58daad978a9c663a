"""``trustlab explain fastpd`` on a column missing in every background row (review F1).

Such a column has no values to draw a PD grid from: naming it in --features is refused in one
line, and the default curves are drawn for the important features that have values.
"""

import json

import numpy as np
import pandas as pd
import skops.io as sio
from sklearn.ensemble import HistGradientBoostingRegressor

from cli_helpers import one_line


def write_files(folder):
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "rare"])
    frame.loc[40:, "rare"] = np.nan  # observed in rows 0..39 only
    target = frame.a + np.where(frame.rare.isna(), 0.0, 5 * frame.rare)
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0)
    sio.dump(model.fit(frame, target), folder / "hgb.skops")
    frame.assign(y=target).to_csv(folder / "table.csv", index=False)
    return folder / "hgb.skops", folder / "table.csv"


def test_a_feature_missing_in_the_whole_background_is_refused_in_features(tmp_path, run):
    model, table = write_files(tmp_path)
    code, _, err = run(
        "explain", "fastpd", "--model", model, "--data", table, "--rows", "0:60",
        "--background-rows", "100:150", "--features", "rare", "--json",
    )  # fmt: skip
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("trustlab: error: --features: ") and "'rare'" in line
    assert "all 50 background rows" in line


def test_default_curves_skip_a_feature_missing_in_the_whole_background(tmp_path, run):
    model, table = write_files(tmp_path)
    code, out, err = run(
        "explain", "fastpd", "--model", model, "--data", table, "--rows", "0:60",
        "--background-rows", "100:150", "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert [c["features"] for c in result["partial_dependence"]] == [["a"], ["b"]]
    assert "rare" in result["importance"]["mean_abs_shap"]

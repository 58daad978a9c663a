"""``trustlab audit --pred COL --group-as-feature`` (fix pass 52d): no model is trained with
--pred, so the option had no effect and was silently ignored; it is refused naming both options
(as --test-size with --pred is)."""

import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture
def scored(tmp_path):
    path = tmp_path / "scored.csv"
    frame = pd.DataFrame(
        {"x": range(40), "y": ["a", "b"] * 20, "g": ["u"] * 20 + ["v"] * 20, "yhat": ["a"] * 40}
    )
    frame.to_csv(path, index=False)
    return ["audit", "--data", path, "--label", "y", "--group", "g", "--pred", "yhat"]


@pytest.mark.parametrize("option", ["--group-as-feature", "--no-group-as-feature"])
def test_group_as_feature_with_pred_is_refused(scored, tmp_path, capsys, option):
    out = tmp_path / "out"
    code, _, err = run([*scored, option, "--out", out], capsys)
    assert code == 2
    assert one_line(err) == (
        f"trustlab: error: {option}: only when a model predicts; with --pred the column 'yhat' "
        "is audited as it is (no model is trained); leave it out"
    )
    assert not out.exists()

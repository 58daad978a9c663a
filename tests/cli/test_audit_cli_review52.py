"""``trustlab audit`` review 52: --test-size with --pred or --model is refused (it was silently
unused: the given predictions or model are audited on every row), and --pred with --model is
refused in words a CLI user can act on (it said '--pred: expected None when a model is given')."""

import pandas as pd
import pytest

from cli_helpers import one_line
from cli_helpers import run_main as run


@pytest.fixture
def scored(tmp_path):
    import skops.io
    from sklearn.dummy import DummyClassifier

    path = tmp_path / "scored.csv"
    rows = 40
    frame = pd.DataFrame(
        {"x": range(rows), "y": ["a", "b"] * 20, "g": ["u"] * 20 + ["v"] * 20, "yhat": ["a"] * 40}
    )
    frame.to_csv(path, index=False)
    model = tmp_path / "m.skops"
    skops.io.dump(DummyClassifier().fit(frame[["x"]], frame["y"]), model)
    return ["audit", "--data", path, "--label", "y", "--group", "g"], model


@pytest.mark.parametrize("given", ["--pred", "--model"])
def test_test_size_with_given_predictions_or_model_is_refused(scored, tmp_path, capsys, given):
    args, model = scored
    value = "yhat" if given == "--pred" else model
    out = tmp_path / "out"
    code, _, err = run([*args, given, value, "--test-size", "0.3", "--out", out], capsys)
    assert code == 2
    words = (
        "a pred column" if given == "--pred" else "a model"
    )  # run_audit's check, since review 53
    assert one_line(err) == (
        f"trustlab: error: --test-size: expected no held-out share with {words} "
        "(every row is audited), got 0.3"
    )
    assert not out.exists()
    code, _, _ = run([*args, given, value, "--out", out], capsys)  # without it: audited
    assert code == 0


def test_pred_with_model_is_refused_in_cli_words(scored, tmp_path, capsys):
    args, model = scored
    code, _, err = run([*args, "--pred", "yhat", "--model", model, "--out", tmp_path / "o"], capsys)
    assert code == 2
    assert one_line(err) == (
        "trustlab: error: --pred: expected no column with a model (audit one or the other), "
        "got 'yhat'"
    )

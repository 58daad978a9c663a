"""``trustlab explain anova-tpnn predict`` on a table with a header and no rows: one line saying
so (it said 'found array with 0 sample(s) (shape=(0, 4))', the shape counting an id column)."""

import numpy as np
import pandas as pd
import pytest
import torch

from cli_helpers import one_line


@pytest.fixture(autouse=True)
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_predict_on_a_header_only_table_says_it_has_no_rows(run, tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(60), "a": rng.normal(size=60), "b": rng.normal(size=60)})
    frame["y"] = frame["a"] + rng.normal(0, 0.1, 60)
    data = tmp_path / "train.csv"
    frame.to_csv(data, index=False)
    model = tmp_path / "model"
    fit = ["explain", "anova-tpnn", "fit", "--data", data, "--label", "y", "--exclude", "id"]
    code, _, err = run(*fit, "--out", model, "--max-epochs", "2", "--n-jobs", "1")
    assert code == 0, err
    empty = tmp_path / "empty.csv"
    frame.drop(columns="y").iloc[:0].to_csv(empty, index=False)
    code, out, err = run("explain", "anova-tpnn", "predict", "--model", model, "--data", empty)
    message = one_line(err)
    assert code == 2 and out == "", err
    assert "--data: expected at least one row to predict" in message and "no rows" in message
    assert "shape" not in message

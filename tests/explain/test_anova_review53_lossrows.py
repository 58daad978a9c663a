"""``ANOVATPNNSummary.to_dict()`` (what ``fit --json`` prints) says which rows its
``validation_loss`` is on: below 61 rows none are held out and it is the training rows' loss,
which the JSON gave under 'validation_loss' with nothing but ``n_held_out: 0`` beside it."""

import numpy as np
import pandas as pd
import pytest
import torch

from trustlab.explain.anova_tpnn import ANOVATPNN


@pytest.mark.parametrize("n_rows, rows", [(40, "training"), (120, "held_out")])
def test_the_loss_names_its_rows(n_rows, rows):
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    rng = np.random.default_rng(530 + n_rows)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n_rows, 2)), columns=["a", "b"])
    y = X.a + 0.1 * rng.normal(size=n_rows)
    model = ANOVATPNN(max_epochs=1, random_state=0, n_jobs=1).fit(X, y)
    torch.set_num_threads(previous)
    result = model.summarize(X, y).to_dict()
    assert result["validation_loss_rows"] == rows
    assert (result["n_held_out"] == 0) == (rows == "training")
    assert result["validation_loss"] == pytest.approx(model.history_["best_validation_loss"])

"""train_smoothed on inputs of the wrong width for the module is an InputError naming X, as
smoothing already was (review 56); it was torch's own "mat1 and mat2 shapes cannot be
multiplied" (review 58)."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.robustness import train_smoothed  # noqa: E402


def test_training_on_the_wrong_width_names_X_and_other_errors_pass():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    expected = re.escape(
        "X: expected inputs of 5 features (the in_features of the base model's first layer), "
        "got 4 features (inputs of shape (4,))"
    )
    with pytest.raises(InputError, match=f"^{expected}$") as caught:
        train_smoothed(net, np.zeros((6, 4)), np.zeros(6, dtype=int), max_epochs=1)
    assert caught.value.argument == "X"

    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 2)

        def forward(self, batch):
            raise RuntimeError("a bug of the model's own")

    with pytest.raises(RuntimeError, match="^a bug of the model's own$"):
        train_smoothed(Broken(), np.zeros((6, 4)), np.zeros(6, dtype=int), max_epochs=1)

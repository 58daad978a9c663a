"""Smoothing a torch model on inputs of the wrong width is an InputError naming the inputs
(``x`` or ``X``), the width the model takes and the width that came; it was torch's own
"mat1 and mat2 shapes cannot be multiplied" from deep inside the sampling loop (review 56)."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.robustness import SmoothedClassifier, certify_dataset  # noqa: E402

WIDTH = re.escape(
    "expected inputs of 3 features (the in_features of the base model's first layer), got 5"
)


@pytest.fixture(scope="module")
def smooth():
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    return SmoothedClassifier(net, 0.5, 2, batch_size=16)


def test_one_input_of_the_wrong_width_is_named_x(smooth):
    x = np.ones(5)
    with pytest.raises(InputError, match=rf"^x: {WIDTH} features \(inputs of shape \(5,\)\)$"):
        smooth.predict(x, 20, 0.01, random_state=2)
    with pytest.raises(InputError, match=rf"^x: {WIDTH}"):
        smooth.certify(x, 0, 5, 20, 0.01, random_state=2)


def test_a_batch_of_the_wrong_width_is_named_X(smooth):
    X = np.ones((3, 5))
    with pytest.raises(InputError, match=rf"^X: {WIDTH}"):
        smooth.sample_counts(X, 10, random_state=2)
    with pytest.raises(InputError, match=rf"^X: {WIDTH}"):
        certify_dataset(smooth, X, [0, 1, 0], n0=5, n=20, random_state=2)
    assert smooth.sample_counts(np.ones((3, 3)), 10, random_state=2).sum() == 30  # right width


def test_a_shape_error_of_another_first_layer_names_the_shape_and_other_errors_pass():
    conv = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten(), torch.nn.Linear(8, 2))
    with pytest.raises(InputError, match=r"^x: expected inputs the base model takes, got inputs "
                       r"of shape \(3, 4, 4\), which it refused \(.*channels"):  # fmt: skip
        SmoothedClassifier(conv, 0.5, 2).predict(np.ones((3, 4, 4)), 10, 0.01, random_state=2)

    class Broken(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(3, 2)

        def forward(self, batch):
            raise RuntimeError("a bug of the model's own")

    with pytest.raises(RuntimeError, match="^a bug of the model's own$"):
        SmoothedClassifier(Broken(), 0.5, 2).predict(np.ones(3), 10, 0.01, random_state=2)

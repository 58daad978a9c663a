"""Review pass 53: a base model's NaN class scores were counted as class 0 (argmax of NaN)."""

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.robustness import SmoothedClassifier, certify_dataset


def _nan_first(batch):
    """Scores whose column 0 is NaN: numpy's argmax takes it as the top class."""
    scores = np.column_stack([batch[:, 0], -batch[:, 0], np.zeros(len(batch))])
    scores[:, 0] = np.nan
    return scores


class _NanLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 3)

    def forward(self, x):
        out = self.linear(x)
        return torch.where(x > 0, torch.full_like(out, float("nan")), out)


@pytest.mark.parametrize("model", [_nan_first, _NanLayer()], ids=["numpy", "torch"])
def test_nan_scores_are_refused_not_counted(model):
    smooth = SmoothedClassifier(model, 0.25, 3)
    message = r"base_model output: expected class scores without NaN .*got NaN scores for \d+ of"
    with pytest.raises(InputError, match=message):
        certify_dataset(smooth, np.array([[2.0], [0.5]]), [1, 2], n0=10, n=200, random_state=0)


def test_infinite_scores_still_have_a_top_class():
    def scores(batch):
        out = np.zeros((len(batch), 3))
        out[:, 2] = np.inf
        out[:, 0] = -np.inf
        return out

    result = certify_dataset(
        SmoothedClassifier(scores, 0.25, 3), np.zeros((2, 1)), [2, 2], n0=10, n=200, random_state=0
    )
    assert result.top_classes.tolist() == [2, 2]
    assert result.counts[:, 2].tolist() == [200, 200]

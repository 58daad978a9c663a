"""A NaN or infinite ``fill`` is refused (review 60).

``apply_mask`` computes ``x * m + fill * (1 - m)``, so a NaN fill made every pixel NaN, the
kept ones too (an infinite fill: ``inf * 0``), and a deletion curve with ``fill=nan`` reported an
agreement of 1.0 from the argmax of NaN logits; BlackBoxClassifier and RegionSparseClassifier
trained on NaN inputs (loss nan) and predicted class 0 without a word. A fill that is not a
number raised torch's TypeError. All are now an InputError naming ``fill``.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    BlackBoxClassifier,
    RegionSparseClassifier,
    apply_mask,
    deletion_curve,
)

BAD = [float("nan"), float("inf"), [1.0, float("nan")], torch.tensor([0.0, -float("inf")])]


@pytest.mark.parametrize("fill", [*BAD, "abc", None])
def test_apply_mask_refuses_a_fill_that_is_not_finite_numbers(fill):
    x, m = torch.ones(1, 2, 1, 2), torch.tensor([[[[1.0, 0.0]]]])
    with pytest.raises(InputError, match="fill"):
        apply_mask(x, m, fill=fill)


def test_apply_mask_still_takes_numbers_and_per_channel_tensors():
    x, m = torch.ones(1, 2, 1, 2), torch.tensor([[[[1.0, 0.0]]]])
    out = apply_mask(x, m, fill=torch.tensor([-1.0, -2.0]))
    assert out[0].tolist() == [[[1.0, -1.0]], [[1.0, -2.0]]]
    assert apply_mask(x, m, fill=np.float32(0.5))[0, 0].tolist() == [[1.0, 0.5]]


def test_deletion_curve_refuses_a_nan_fill():
    seg = np.repeat(np.arange(4), 4).reshape(1, 4, 4)
    classify = lambda x: torch.stack([x[:, 0, 0].sum(1), torch.full((len(x),), 2.0)], 1)  # noqa: E731
    x = np.full((1, 1, 4, 4), 1.0, dtype=np.float32)
    with pytest.raises(InputError, match="fill"):
        deletion_curve(classify, x, seg, [[0.9, 0.1, 0.2, 0.3]], (0.2,), fill=float("nan"))


@pytest.mark.parametrize("estimator", [BlackBoxClassifier, RegionSparseClassifier])
@pytest.mark.parametrize("fill", [float("nan"), -float("inf")])
def test_the_estimators_refuse_a_fill_that_is_not_finite_before_training(estimator, fill):
    x = np.zeros((4, 3, 16, 16), dtype=np.float32)
    with pytest.raises(InputError, match="fill: expected a finite number"):
        estimator(max_epochs=1, fill=fill).fit(x, np.array([0, 1, 0, 1]))

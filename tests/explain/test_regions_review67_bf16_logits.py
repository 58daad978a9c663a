"""Review 67 of deletion_curve / insertion_curve with a bfloat16 classifier.

Measured on the old file: a classify_fn returning bfloat16 logits (a model run in bfloat16)
stopped both curves on torch's raw "TypeError: Got unsupported ScalarType BFloat16" (numpy has no
bfloat16). Now the logits are upcast to float32 (which holds every bfloat16 value exactly, so the
argmax is the same) and the curves equal those of the float32 logits; NaN bfloat16 logits are
refused like NaN float32 ones (review 66)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trustlab.errors import InputError
from trustlab.explain.regions.metrics import deletion_curve, insertion_curve

SEG = np.repeat(np.arange(4), 4).reshape(1, 4, 4)
X = np.linspace(0.1, 1.0, 16, dtype=np.float32).reshape(1, 1, 4, 4)
SCORES = [[0.9, 0.1, 0.2, 0.3]]


def _classify(dtype):
    def classify(x):  # class 1 while the first region's pixels are bright
        bright = x[:, 0, 0, :].sum(1)
        return torch.stack([torch.full_like(bright, 0.5), bright], 1).to(dtype)

    return classify


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
def test_bfloat16_logits_give_the_float32_curve(curve):
    levels = (0.25, 0.5, 1.0)
    got = curve(_classify(torch.bfloat16), X, SEG, SCORES, levels)
    want = curve(_classify(torch.float32), X, SEG, SCORES, levels)
    assert np.array_equal(got.agreement, want.agreement)
    assert np.array_equal(got.prediction, want.prediction)
    assert got.agreement.tolist() != [1.0] * 3 or curve is insertion_curve


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
def test_nan_bfloat16_logits_are_refused(curve):
    def nan(x):
        return torch.full((len(x), 2), float("nan"), dtype=torch.bfloat16)

    with pytest.raises(InputError, match="NaN") as e:
        curve(nan, X, SEG, SCORES, (0.25,))
    assert e.value.argument == "classify_fn"

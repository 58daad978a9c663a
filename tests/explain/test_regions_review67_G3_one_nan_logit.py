"""Review 67 (G3): a single NaN logit is refused by the regions fidelity curves, not only an all-NaN row.

bd5214de's tests (tests/explain/test_regions_review66_nan_logits.py) give logits that are NaN in
every cell of a row, so a check written ``np.isnan(arr).all()`` (or one that looks at the first
row or column only) would pass them while a diverged classifier with one NaN class score, whose
argmax numpy takes as the NaN's class, slips through. Here one cell, the last class of the last
image of the batch, is NaN.
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError

torch = pytest.importorskip("torch")

from trustlab.explain.regions.metrics import deletion_curve, insertion_curve  # noqa: E402

SEG = np.repeat(np.arange(4), 4).reshape(1, 4, 4)
X = np.full((1, 1, 4, 4), 1.0, dtype=np.float32)
SCORES = [[0.9, 0.1, 0.2, 0.3]]


def _one_nan_tensor(x):  # finite, except the last class of the last image
    logits = torch.stack([x.flatten(1).sum(1), torch.ones(len(x)), torch.zeros(len(x))], 1)
    logits[-1, -1] = float("nan")
    return logits


def _one_nan_array(x):
    logits = np.tile(np.array([1.0, 2.0, 0.5]), (len(x), 1))
    logits[-1, -1] = np.nan
    return logits


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
@pytest.mark.parametrize("classify", [_one_nan_tensor, _one_nan_array])
def test_one_nan_logit_is_refused(curve, classify):
    with pytest.raises(InputError, match="NaN") as info:
        curve(classify, X, SEG, SCORES, (0.25, 0.5))
    assert info.value.argument == "classify_fn"


def test_the_same_logits_without_the_nan_give_a_curve():
    def classify(x):
        return np.tile(np.array([1.0, 2.0, 0.5]), (len(x), 1))

    r = deletion_curve(classify, X, SEG, SCORES, (0.25, 0.5))
    assert r.agreement.tolist() == [1.0, 1.0]

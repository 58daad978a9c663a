"""deletion_curve / insertion_curve refuse NaN logits from the classifier (review 66).

Measured before: a classifier whose logits were NaN (a diverged network) gave the argmax 0 for
every image, masked and unmasked, so deletion_curve reported agreement [1.0, 1.0, 1.0], the
"prediction holds" of a perfectly robust classifier, without a word (the module already refused
NaN images for this reason); with NaN only on masked images the masked prediction was class 0,
counted as agreeing wherever the unmasked prediction was 0. Now InputError naming classify_fn
("logits without NaN"); finite logits (and infinite ones, which argmax handles) give the same curves.
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


def _all_nan(x):
    return torch.full((len(x), 2), float("nan"))


def _nan_when_masked(x):  # class 0 on the whole image, NaN once a pixel is blacked out
    logits = torch.stack([torch.ones(len(x)), torch.zeros(len(x))], 1)
    blank = (x == 0).flatten(1).any(1)
    return torch.where(blank[:, None], torch.full_like(logits, float("nan")), logits)


@pytest.mark.parametrize("curve", [deletion_curve, insertion_curve])
@pytest.mark.parametrize("classify", [_all_nan, _nan_when_masked])
def test_nan_logits_are_refused(curve, classify):
    with pytest.raises(InputError, match="NaN") as info:
        curve(classify, X, SEG, SCORES, (0.25, 0.5))
    assert info.value.argument == "classify_fn"


def test_nan_logits_from_an_array_classifier_are_refused():
    with pytest.raises(InputError) as info:
        deletion_curve(lambda x: np.full((len(x), 2), np.nan), X, SEG, SCORES, (0.25,))
    assert info.value.argument == "classify_fn"


def test_infinite_and_finite_logits_still_work():
    def classify(x):  # -inf for class 1 unless row 0 is blacked out
        row0 = x[:, 0, 0].sum(1)
        other = torch.where(row0 > 0, -torch.inf, torch.tensor(5.0))
        return torch.stack([row0, other], 1)

    r = deletion_curve(classify, X, SEG, SCORES, (0.2, 0.25))
    assert r.agreement.tolist() == [0.0, 0.0]
    assert r.reference.tolist() == [0]

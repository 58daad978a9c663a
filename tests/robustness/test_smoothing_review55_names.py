"""certify_counts names its own arguments when it refuses them (review 55).

Before, a bad ``top_class`` or ``label`` was refused as ``top_classes`` or ``labels``, the
argument names of ``DatasetCertificate.from_counts`` that it calls, not the caller's.
"""

import pytest

from trustlab.errors import InputError
from trustlab.robustness import certify_counts


@pytest.mark.parametrize(
    ("top_class", "label", "named"),
    [
        (2, 0, "top_class"),
        (True, 0, "top_class"),
        ([0, 1], 0, "top_class"),
        (0, 7, "label"),
        (0, 1.5, "label"),
        (0, [0, 1], "label"),
    ],
)
def test_bad_class_is_refused_under_its_own_name(top_class, label, named):
    with pytest.raises(InputError, match=rf"^{named}: expected") as caught:
        certify_counts([5, 5], top_class, label, sigma=0.5, alpha=0.1)
    assert caught.value.argument == named


def test_good_and_bad_counts_still_behave():
    cert = certify_counts([100, 6000, 3900, 0], 1, 1, sigma=0.5, alpha=0.001)
    assert cert.top_class == 1 and cert.label == 1 and cert.radius > 0
    with pytest.raises(InputError, match="^counts: expected one row"):
        certify_counts([[5, 5], [1, 1]], 0, 0, sigma=0.5, alpha=0.1)

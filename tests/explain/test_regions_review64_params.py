"""Training settings of the region models (review 64): BlackBoxClassifier(weight_decay=-1 or NaN)
raised torch's raw 'Invalid weight_decay value', weight_decay='a' a raw TypeError, and
weight_decay=inf was accepted: the black box trained to loss NaN and predicted class 0 for every
image; RegionSparseClassifier (also with lambda_covariance=inf) died in its first steps with
'cov: expected finite values';
kept_pixels=np.float32(0.25) was refused as not a fraction in (0, 1]; bad selector_widths or
classifier_widths were refused as 'widths' (the networks' argument, not the estimators'). Each is
now an InputError naming the estimator's parameter, and numpy fractions are accepted."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from trustlab.errors import InputError  # noqa: E402
from trustlab.explain.regions import (  # noqa: E402
    BlackBoxClassifier,
    RegionSparseClassifier,
)

X = np.random.default_rng(0).random((4, 3, 8, 8)).astype(np.float32)
Y = np.array([0, 1, 0, 1])


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"weight_decay": -1.0}, "weight_decay"), ({"weight_decay": float("nan")}, "weight_decay"),
     ({"weight_decay": "a"}, "weight_decay"), ({"weight_decay": np.inf}, "weight_decay"),
     ({"classifier_widths": (0, 2, 2)}, "classifier_widths"),
     ({"classifier_widths": (4,)}, "classifier_widths")],
)  # fmt: skip
def test_blackbox_settings_name_themselves(kwargs, argument):
    with pytest.raises(InputError) as info:
        BlackBoxClassifier(max_epochs=1, **kwargs).fit(X, Y)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"weight_decay": np.inf}, "weight_decay"), ({"lambda_covariance": np.inf}, "lambda_covariance"),
     ({"weight_decay": -1.0}, "weight_decay"), ({"selector_widths": (0, 2)}, "selector_widths"),
     ({"selector_widths": "ab"}, "selector_widths"),
     ({"classifier_widths": (2, 2)}, "classifier_widths")],
)  # fmt: skip
def test_region_model_settings_name_themselves(kwargs, argument):
    with pytest.raises(InputError) as info:
        RegionSparseClassifier(max_epochs=1, pretrain_epochs=0, **kwargs)._check_params()
    assert info.value.argument == argument


def test_numpy_fraction_of_kept_pixels_is_accepted():
    # the settings pass: the first error is the labels' (one class), checked after them
    with pytest.raises(InputError) as info:
        BlackBoxClassifier(kept_pixels=np.float32(0.25)).fit(X, np.zeros(4))
    assert info.value.argument == "y"

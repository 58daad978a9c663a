"""The autoencoder refuses a source mean its float32 rows cannot hold, like a target's
(review 58, diffD; ab7171a checked the target only)."""

import numpy as np
import pytest

from trustlab.errors import InputError

pytest.importorskip("torch")

from trustlab.safety.transfer import ActivationMap  # noqa: E402


def test_the_autoencoder_refuses_a_source_mean_past_float32():
    # a source around 1e39 (past float32's 3.4e38; adding 1e39 in float64 leaves only rounding
    # noise as its spread, so only the mean matters here): 'overflow encountered
    # in cast', held-out R^2 -inf
    rng = np.random.default_rng(11)
    source = rng.normal(size=(30, 3))
    target = source @ rng.normal(size=(3, 2))
    with pytest.raises(
        InputError, match=r"^source: expected activations whose mean lies within \+-1e\+30 for"
    ):
        ActivationMap(max_epochs=1).fit(source + 1e39, target)
    with pytest.raises(
        InputError, match=r"^source: expected activations whose mean lies within \+-1e\+30 for"
    ):
        ActivationMap(max_epochs=1).fit(-1e39 + source, target)
    ActivationMap(kind="affine").fit(source + 1e39, target)  # float64: taken
    # a mean inside the limit is not refused (with a spread of 1e24, so the mean also lies within
    # the 1e6 standard deviations of FLOAT32_OFFSET)
    ActivationMap(max_epochs=1).fit(source * 1e24 + 1e29, target)

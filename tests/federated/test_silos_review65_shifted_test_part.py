"""A silo's shift applies to its test part as to its training part (review 65 mutation check).

The module docstring says so ("a silo's test data share its distribution"), yet _slice_silos
with the test part left unshifted passed the silo, settings, math, simulation, accuracy and
k-means tests that are not slow (81).
"""

import numpy as np
from scipy import ndimage

from trustlab.federated.silos import make_digit_silos


def _rotated(X, degrees):
    images = X.reshape(-1, 8, 8).astype(np.float64)
    images = ndimage.rotate(images, degrees, axes=(1, 2), reshape=False, order=1)
    return np.clip(images, 0.0, 1.0).reshape(len(X), -1).astype(np.float32)


def test_the_rotation_of_a_silo_turns_its_test_images_too():
    plain = make_digit_silos(3, "none", random_state=1)
    turned = make_digit_silos(3, "rotation", random_state=1)  # 0, -50 and 120 degrees
    for i, degrees in ((1, -50.0), (2, 120.0)):
        assert np.array_equal(turned[i].y_test, plain[i].y_test)
        for part in ("X_train", "X_test"):
            expected = _rotated(getattr(plain[i], part), degrees)
            # same float path (float32 in, float64 rotation, float32 out): 1e-6 is headroom
            np.testing.assert_allclose(getattr(turned[i], part), expected, atol=1e-6)
            assert not np.allclose(expected, getattr(plain[i], part), atol=0.05)
    np.testing.assert_array_equal(turned[0].X_test, plain[0].X_test)

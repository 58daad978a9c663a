"""Review 61: the silo builders handed random_state to numpy unchecked: -1 was a raw
'ValueError: expected non-negative integer', 1.5 or "a" a raw TypeError from SeedSequence, and
True built the silos of seed 1 without a word."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated.silos import make_digit_silos, make_mnist_silos, make_silos


@pytest.mark.parametrize("build", [make_digit_silos, make_mnist_silos])
@pytest.mark.parametrize("seed", [-1, 1.5, "a", True, None])
def test_a_seed_that_is_not_a_non_negative_int_is_refused_by_name(build, seed):
    with pytest.raises(InputError, match=r"^random_state: expected a non-negative int seed"):
        build(2, random_state=seed)


def test_a_numpy_integer_seed_builds_the_same_silos():
    a = make_silos("digits", 2, "none", random_state=np.int64(3))
    b = make_silos("digits", 2, "none", random_state=3)
    assert all(np.array_equal(x.X_train, y.X_train) for x, y in zip(a, b, strict=True))

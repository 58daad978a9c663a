"""Stop 61: one ``check_int_seed`` for the seeds that become a SeedSequence's entropy (the
watermark evaluation's, export's and question wording's three copies before)."""

from __future__ import annotations

import numpy as np
import pytest

from trustlab._checks import check_int_seed
from trustlab.errors import InputError


@pytest.mark.parametrize("seed", [0, 7, np.int64(2**40)])
def test_a_non_negative_int_comes_back_as_an_int(seed):
    out = check_int_seed(seed)
    assert out == int(seed) and type(out) is int


@pytest.mark.parametrize("seed", [True, 1.5, 2.0, -1, "3", None, np.random.default_rng(0)])
def test_anything_else_is_refused_naming_the_argument(seed):
    with pytest.raises(InputError, match=r"^seed_x: expected a non-negative int seed, got") as e:
        check_int_seed(seed, "seed_x")
    assert e.value.argument == "seed_x"

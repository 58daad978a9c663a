"""Review 61: a user silo with shift=None (no shift) failed check_silos with Python's raw
"TypeError: 'NoneType' object is not iterable", naming no silo."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.federated import Silo
from trustlab.federated.silos import check_silos

X, y = np.zeros((4, 4), np.float32), np.array([0, 1, 0, 1])


@pytest.mark.parametrize("shift", [None, "rotate", 5])
def test_a_shift_that_is_not_a_dict_is_refused_naming_the_silo(shift):
    silos = [Silo(X, y, X, y), Silo(X, y, X, y, shift=shift)]
    with pytest.raises(InputError, match=r"^silos\[1\]\.shift: expected a dict of shifts"):
        check_silos(silos)


def test_a_dict_shift_is_kept():
    checked = check_silos([Silo(X, y, X, y), Silo(X, y, X, y, shift={"rotate": 30.0})])
    assert checked[1].shift == {"rotate": 30.0} and checked[0].shift == {}

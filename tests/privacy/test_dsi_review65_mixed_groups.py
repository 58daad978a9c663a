"""Review 65: group labels numpy cannot sort (numbers and text in one object array)."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.privacy import DSIMechanism, group_gradient_differences

MIXED = np.array([1, "a", "a"], dtype=object)  # e.g. a pandas object column


def test_group_gradient_differences_names_groups():
    with pytest.raises(InputError, match="groups: .*one comparable type.*got int and str"):
        group_gradient_differences([[1.0], [2.0], [6.0]], MIXED)


def test_dsi_mechanism_fit_names_groups():
    mech = DSIMechanism(lambda rows: rows.sum(axis=0), epsilon=1.0, delta=1e-5)
    with pytest.raises(InputError, match="groups: .*one comparable type"):
        mech.fit(np.array([[1.0], [2.0], [6.0]]), MIXED)

"""Review 65 of cost-sensitive smoothing: inputs refused with an InputError naming them."""

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import check_cost_matrix


@pytest.mark.parametrize("n_classes", [2.5, -1, 0, 1, "3", None, True])
def test_check_cost_matrix_refuses_a_bad_class_count(n_classes):
    # check_cost_matrix(None, 2.5) was numpy's TypeError, -1 a ValueError, 0 and 1 an empty
    # or 1 x 1 matrix; a given matrix was compared with '(True, True)'
    with pytest.raises(InputError, match=r"^n_classes: expected an integer >= 2, got"):
        check_cost_matrix(None, n_classes)
    with pytest.raises(InputError, match=r"^n_classes: expected an integer >= 2, got"):
        check_cost_matrix([[0, 1], [1, 0]], n_classes)


def test_check_cost_matrix_takes_numpy_class_counts():
    assert check_cost_matrix(None, np.int64(3)).tolist() == (1 - np.eye(3)).tolist()

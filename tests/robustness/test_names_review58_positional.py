"""A renamed keyword's old name beside the new one given by position is the InputError naming
the old name that keyword + keyword gives; it was Python's TypeError "got multiple values for
argument 'n_classes'", naming the keyword the caller did not type (review 58)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.robustness import SmoothedClassifier, check_cost_matrix, make_cost_matrix

BOTH = re.escape(
    "num_classes: expected n_classes only (num_classes is its deprecated name), got both"
)


def test_old_keyword_beside_the_new_positional_names_the_old_one():
    with pytest.raises(InputError, match=f"^{BOTH}$") as caught:
        make_cost_matrix(3, {0: [1]}, num_classes=3)
    assert caught.value.argument == "num_classes"
    with pytest.raises(InputError, match=f"^{BOTH}$"):
        check_cost_matrix(None, 3, num_classes=3)
    with pytest.raises(InputError, match=f"^{BOTH}$"):  # a method: self counts as a position
        SmoothedClassifier(lambda b: np.zeros(len(b), int), 0.5, 3, num_classes=3)


def test_the_old_keyword_alone_still_works_with_a_warning():
    with pytest.warns(FutureWarning, match="num_classes is deprecated; use n_classes"):
        costs = make_cost_matrix(num_classes=3, harmful={0: [1]})
    assert costs.tolist() == make_cost_matrix(3, {0: [1]}).tolist()
    with pytest.warns(FutureWarning):
        smooth = SmoothedClassifier(lambda b: np.zeros(len(b), int), 0.5, num_classes=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert smooth.n_classes == 3

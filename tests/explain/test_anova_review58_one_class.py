"""Review 58: a label with one class is named as the user wrote it, not as numpy's repr.

`trustlab explain anova-tpnn fit --label k` on a column of 1s said "--label: expected at least
2 classes, got 'only np.int64(1)'".
"""

from __future__ import annotations

import numpy as np
import pytest

from trustlab.errors import InputError
from trustlab.explain.anova_tpnn import ANOVATPNN


@pytest.mark.parametrize(
    ("labels", "shown"), [(np.ones(20, dtype=int), "1"), (np.array(["a"] * 20), "'a'")]
)
def test_one_class_is_named_plainly(labels, shown):
    X = np.random.default_rng(58).normal(size=(20, 2))
    with pytest.raises(InputError, match=rf"^y: expected at least 2 classes, got only {shown}$"):
        ANOVATPNN(max_epochs=1, task="classification").fit(X, labels)

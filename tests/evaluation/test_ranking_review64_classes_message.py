"""Diff review 64 B: classes given as an array (a model's ``classes_``) that disagree with the
DataFrame columns were refused with 'got an array of shape (2,) and dtype <U3', not the classes."""

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import rank_models

P = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
DOG_CAT = pd.DataFrame(P, columns=["dog", "cat"])


def test_array_classes_that_disagree_are_shown_by_value():
    with pytest.raises(InputError, match=r"\['dog', 'cat'\], got (list )?\['cat', 'dog'\]$"):
        rank_models({"a": DOG_CAT, "b": DOG_CAT}, labels=np.array(["cat", "dog"] * 2),
                    classes=np.array(["cat", "dog"]), n_bootstrap=0)  # fmt: skip

"""Review 64: rank_models reads DataFrame outputs by column position, so their column labels
must agree. Before, the same model given with its columns ['dog', 'cat'] beside one with
['cat', 'dog'] got accuracy 0.0 instead of 1.0 without a word (the CLI refused such CSVs)."""

import numpy as np
import pandas as pd
import pytest

from trustlab.errors import InputError
from trustlab.evaluation import rank_models

P = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6]])
Y = ["cat", "dog", "cat", "dog"]
CAT_DOG = pd.DataFrame(P, columns=["cat", "dog"])
DOG_CAT = pd.DataFrame(P[:, ::-1], columns=["dog", "cat"])  # the same model, columns swapped


def test_dataframes_with_columns_in_another_order_are_refused_by_name():
    with pytest.raises(InputError, match=r"^outputs\['b'\]: expected the columns \['cat', 'dog'\]"):
        rank_models({"a": CAT_DOG, "b": DOG_CAT}, labels=Y, classes=["cat", "dog"], n_bootstrap=0)
    with pytest.raises(InputError, match=r"^outputs\['b'\]"):  # without labels too
        rank_models({"a": CAT_DOG, "b": DOG_CAT}, n_bootstrap=0)


def test_classes_in_another_order_than_the_dataframe_columns_are_refused():
    with pytest.raises(InputError, match=r"^classes: expected the columns .*\['dog', 'cat'\]"):
        rank_models({"a": DOG_CAT, "b": DOG_CAT}, labels=Y, classes=["cat", "dog"], n_bootstrap=0)


def test_calibration_dataframes_must_have_the_same_columns():
    with pytest.raises(InputError, match=r"^calibration_outputs\['a'\]: expected the columns"):
        rank_models({"a": CAT_DOG, "b": CAT_DOG}, labels=Y, classes=["cat", "dog"],
                    calibration_outputs={"a": DOG_CAT, "b": DOG_CAT}, calibration_labels=Y,
                    n_bootstrap=0)  # fmt: skip


def test_agreeing_columns_rank_as_arrays_do():
    ref = rank_models({"a": P, "b": P[:, ::-1].copy()}, labels=Y, classes=["cat", "dog"],
                      n_bootstrap=0)  # fmt: skip
    for outputs in (
        {"a": CAT_DOG, "b": pd.DataFrame(P[:, ::-1], columns=["cat", "dog"])},
        {"a": pd.DataFrame(P), "b": P[:, ::-1].copy()},  # pandas' default column numbers
    ):
        got = rank_models(outputs, labels=Y, classes=["cat", "dog"], n_bootstrap=0)
        assert np.array_equal(got.accuracy, ref.accuracy)
        assert np.array_equal(got.scores, ref.scores)
    assert ref.accuracy.tolist() == [1.0, 0.0]

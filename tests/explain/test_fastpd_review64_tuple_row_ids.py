"""Review 64: FastPD.explain takes a list of tuples as row ids, as it takes a MultiIndex.

A list of tuple ids ([(1, 'a'), ...], the ids of a MultiIndex written out) was refused as a 2-D
array ("expected a 1-D sequence of ids"), and tuples of different lengths or a ragged list gave a
bare numpy ValueError ("inhomogeneous shape"). Now tuple ids are kept as given, one per row, and a
ragged list of lists is an InputError naming row_ids.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


@pytest.fixture(scope="module")
def explainer():
    X = np.random.default_rng(0).normal(size=(30, 3))
    return FastPD(DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0])).fit(X)


@pytest.mark.parametrize(
    "ids",
    [
        [(1, "a"), (2, "b"), (3, "c")],
        ((1, "a"), (2, "b"), (3, "c")),
        [(1, "a"), (2,), (3, "c", 0)],
    ],
)
def test_tuple_ids_kept_one_per_row(explainer, ids):
    rows = explainer.background_[:3]
    table = explainer.explain(rows, row_ids=ids).shap_table()
    assert table["row"].tolist() == list(ids)
    index = pd.MultiIndex.from_tuples([(1, "a"), (2, "b"), (3, "c")])
    from_index = explainer.explain(rows, row_ids=index).shap_table()
    assert np.array_equal(table.drop(columns="row").to_numpy(), from_index.drop(columns="row"))


def test_ragged_ids_refused(explainer):
    with pytest.raises(InputError, match=r"^row_ids: expected a 1-D sequence of ids, one per row"):
        explainer.explain(explainer.background_[:3], row_ids=[[1, 2], [3], [4]])

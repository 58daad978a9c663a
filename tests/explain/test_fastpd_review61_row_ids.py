"""Review 61: FastPD.explain refuses row_ids that are not one id per row.

A scalar (5), a string or a dict gave a bare "TypeError: len() of unsized object"; a (5, 2) array
for 5 rows was accepted as the rows' ids. Now an InputError naming row_ids.
"""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD


@pytest.fixture(scope="module")
def explainer():
    X = np.random.default_rng(0).normal(size=(30, 3))
    return FastPD(DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, X[:, 0])).fit(X)


@pytest.mark.parametrize("row_ids", [5, "abcde", np.arange(10).reshape(5, 2)])
def test_row_ids_must_be_one_dimensional(explainer, row_ids):
    with pytest.raises(InputError, match=r"^row_ids: expected a 1-D sequence of ids, one per row"):
        explainer.explain(explainer.background_[:5], row_ids=row_ids)


def test_one_id_per_row_still_taken(explainer):
    explanation = explainer.explain(explainer.background_[:5], row_ids=[7, 3, 9, 1, 2])
    assert explanation.shap_values.shape == (5, 3)

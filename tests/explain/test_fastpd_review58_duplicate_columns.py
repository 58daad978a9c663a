"""Review 58: a DataFrame with two columns of one name is refused, not read as one of them.

FastPD(model).fit(frame) with columns ['a', 'a', 'b'] (a model fitted on an array) matched
every feature to the first column of its name: the second feature took the first's values, so
the mean output and every SHAP value were wrong (rows no longer summed to the prediction).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from trustlab.errors import InputError
from trustlab.explain import FastPD

_X = np.random.default_rng(58).normal(size=(40, 3))
_Y = _X[:, 0] + 2 * _X[:, 1]


def test_background_with_a_repeated_column_name_is_refused():
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(_X, _Y)
    frame = pd.DataFrame(_X, columns=["a", "a", "b"])
    with pytest.raises(InputError, match=r"^background: expected one column per feature.*'a'"):
        FastPD(model).fit(frame)


def test_rows_with_a_repeated_feature_column_are_refused():
    names = ["a", "b", "c"]
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(
        pd.DataFrame(_X, columns=names), _Y
    )
    explainer = FastPD(model).fit(pd.DataFrame(_X, columns=names))
    doubled = pd.DataFrame(np.column_stack([_X[:, [1]], _X]), columns=["a", "a", "b", "c"])
    with pytest.raises(InputError, match=r"^X_eval: expected one column per feature.*'a'"):
        explainer.shap_values(doubled)
    # a repeated column the model does not read is left out, as any other column
    extra = pd.DataFrame(np.column_stack([_X, _X[:, :2]]), columns=names + ["d", "d"])
    phi = explainer.shap_values(extra)
    assert np.allclose(
        phi.sum(axis=1) + explainer.expected_value_, model.predict(pd.DataFrame(_X, columns=names))
    )


def test_explain_table_refuses_repeated_column_names():
    # it failed with AttributeError: 'DataFrame' object has no attribute 'dtype'
    from trustlab.explain import explain_table

    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(_X, _Y)
    table = pd.DataFrame(np.column_stack([_X, _Y]), columns=["a", "a", "b", "label"])
    with pytest.raises(InputError, match=r"^data: expected distinct column names"):
        explain_table(model, table, label="label")
